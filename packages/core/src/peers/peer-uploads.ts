// What one peer asked us for: byte ranges of segments, each needed by a time the peer said, handed
// to the upload governor as one source and sent as it paces them, the earliest deadline first. A
// request is taken only if the governor can meet it without making an earlier one late; else the
// peer hears at once how long it would wait (`busy`), and asks elsewhere. A segment we are still
// receiving is relayed as its bytes arrive; its last byte waits until our copy is verified.
import type { Clock } from '../types.js';
import { MIN_CHUNK_BYTES } from '../upload/pace.js';
import type { UploadGovernor, UploadSource } from '../upload/upload-governor.js';
import { DATA_HEADER_BYTES, NO_DEADLINE, NOT_SERVING, TO_SEGMENT_END, encodeDataInto, type PeerMessage } from '../wire/peer-protocol.js';

/** Requests one peer may have queued with us: a flood of them gets `busy`, not our uplink. */
const MAX_QUEUED_UPLOADS = 8;

/** What serving a peer needs from the engine (part of the session's hooks). */
export interface UploadHooks {
  /** Size of a segment we can serve (stored, or being received and its size known: relayed as it arrives), or undefined. */
  segmentSize(sequence: number): number | undefined;
  /** How many bytes of it, from its start, may go out now (all once stored and verified), or undefined when we cannot serve it. */
  readableBytes(sequence: number): number | undefined;
  /** A copy of bytes [start, end) of a segment we serve, end at most its readable bytes. */
  readSegment(sequence: number, start: number, end: number): Uint8Array | undefined;
  /** Whether we serve requests right now. */
  uploadEnabled(): boolean;
  onBytesUp(bytes: number): void;
}

/** The session's channel, as its uploads use it. */
export interface UploadChannel {
  /** Bytes the channel holds unsent. */
  unsent(): number;
  /** The most payload one data message may carry on this channel. */
  maxPayloadBytes(): number;
  send(message: PeerMessage): void;
  sendBytes(bytes: Uint8Array): void;
  violation(reason: string): void;
  /** The governor sent data after a pause: the session's pings resume. */
  uploading(): void;
  /** A burst of uploads to the peer started or ended: ping it now (see PeerSession.pingNow). */
  pingNow(): void;
}

interface Upload {
  sequence: number;
  readonly start: number;
  /** Exclusive, within the segment. */
  readonly end: number;
  readonly totalBytes: number;
  /** The next byte to send. */
  offset: number;
  /** When the peer needs the last byte, on our clock (Infinity: no deadline). */
  readonly deadlineMs: number;
  /** The data messages of the range, written chunk by chunk as they are sent (one allocation per upload). */
  wire: Uint8Array | undefined;
  wireOffset: number;
}

export class PeerUploads implements UploadSource {
  private readonly queue: Upload[] = [];
  /** When data last went to this peer. */
  lastSentMs = -Infinity;
  /** Payload bytes sent to this peer in all (the governor's delivery samples compare them with what it got). */
  sentBytes = 0;

  constructor(
    private readonly channel: UploadChannel,
    private readonly hooks: UploadHooks,
    private readonly governor: UploadGovernor,
    private readonly clock: Clock,
  ) {}

  get bufferedAmount(): number {
    return this.channel.unsent();
  }

  get nextDeadlineMs(): number | undefined {
    return this.next()?.deadlineMs;
  }

  get backlogBytes(): number {
    let bytes = 0;
    for (const upload of this.queue) bytes += upload.end - upload.offset;
    return bytes;
  }

  *queued(): Iterable<{ remainingBytes: number; deadlineMs: number }> {
    for (const upload of this.queue) yield { remainingBytes: upload.end - upload.offset, deadlineMs: upload.deadlineMs };
  }

  uploading(): void {
    this.channel.uploading();
  }

  burstEdge(): void {
    this.channel.pingNow();
  }

  /** The peer asks for bytes [start, end) of the segment within `withinMs`; returns a violation, if it is one. */
  request(sequence: number, start: number, end: number, withinMs: number): string | undefined {
    if (this.queue.some((upload) => upload.sequence === sequence)) return `second request for segment ${sequence}`;
    if (!this.hooks.uploadEnabled()) return this.busy(sequence, NOT_SERVING);
    if (this.queue.length >= MAX_QUEUED_UPLOADS) return this.busy(sequence, this.governor.waitBehindBacklogMs());
    const totalBytes = this.hooks.segmentSize(sequence);
    if (totalBytes === undefined) return this.reply({ type: 'absent', sequence });
    // Nothing of the segment from there on: the range is done at once.
    if (start >= totalBytes) return this.reply({ type: 'done', sequence, totalBytes });
    const rangeEnd = end === TO_SEGMENT_END ? totalBytes : Math.min(end, totalBytes);
    const deadlineMs = withinMs === NO_DEADLINE ? Infinity : this.clock.now() + withinMs;
    const waitMs = this.governor.admit(rangeEnd - start, deadlineMs);
    if (waitMs !== undefined) return this.busy(sequence, waitMs);
    this.queue.push({ sequence, start, end: rangeEnd, totalBytes, offset: start, deadlineMs, wire: undefined, wireOffset: 0 });
    // Its pings come a second apart from now on: they time our uplink while we upload to it.
    this.channel.uploading();
    this.governor.pump();
    return undefined;
  }

  cancel(sequence: number): void {
    const index = this.queue.findIndex((upload) => upload.sequence === sequence);
    if (index === -1) return;
    const [upload] = this.queue.splice(index, 1);
    this.governor.usage.cancelled(upload!.offset - upload!.start);
  }

  /**
   * The bytes we relayed of this segment turned out bad (our copy failed verification), or are
   * gone: a started upload of it ends with `absent`, so that its rest never comes from another
   * copy (the peer would get a mix, and blame us).
   */
  abandonRelayed(sequence: number): void {
    const index = this.queue.findIndex((upload) => upload.sequence === sequence && upload.offset > upload.start);
    if (index === -1) return;
    this.queue.splice(index, 1);
    this.channel.send({ type: 'absent', sequence });
  }

  clear(): void {
    this.queue.length = 0;
  }

  /** Sends up to `maxBytes` of the earliest-deadline ready upload (the governor calls this); returns the payload bytes sent. */
  sendChunk(maxBytes: number): number {
    const upload = this.next();
    if (!upload) return 0;
    const readable = this.hooks.readableBytes(upload.sequence);
    const end = Math.min(upload.offset + Math.min(maxBytes, this.channel.maxPayloadBytes()), upload.end, readable ?? 0);
    const payload = readable === undefined ? undefined : this.hooks.readSegment(upload.sequence, upload.offset, end);
    if (!payload) {
      // Evicted while we were serving it, or a relayed segment whose transfer failed.
      this.queue.splice(this.queue.indexOf(upload), 1);
      this.channel.send({ type: 'absent', sequence: upload.sequence });
      return 0;
    }
    if (!upload.wire) {
      const remaining = upload.end - upload.offset;
      // Chunks of MIN_CHUNK_BYTES or more (less only where the channel carries less), but for a
      // relayed segment's last two (see next()).
      const smallest = Math.min(MIN_CHUNK_BYTES, this.channel.maxPayloadBytes());
      upload.wire = new Uint8Array(remaining + (Math.ceil(remaining / smallest) + 1) * DATA_HEADER_BYTES);
    }
    const message = encodeDataInto(upload.wire.subarray(upload.wireOffset), upload.sequence, upload.offset, upload.totalBytes, payload);
    upload.wireOffset += message.length;
    this.channel.sendBytes(message);
    this.lastSentMs = this.clock.now();
    this.sentBytes += payload.length;
    this.hooks.onBytesUp(payload.length);
    upload.offset = end;
    if (end === upload.end) {
      this.queue.splice(this.queue.indexOf(upload), 1);
      this.channel.send({ type: 'done', sequence: upload.sequence, totalBytes: upload.totalBytes });
    }
    return payload.length;
  }

  private busy(sequence: number, waitMs: number): undefined {
    return this.reply({ type: 'busy', sequence, waitMs: waitMs === NOT_SERVING ? NOT_SERVING : Math.min(Math.round(waitMs), NOT_SERVING - 1) });
  }

  private reply(message: PeerMessage): undefined {
    this.channel.send(message);
    return undefined;
  }

  /** The earliest-deadline upload that can send now: a relayed segment waits for its next bytes to arrive (one gone is answered at once). */
  private next(): Upload | undefined {
    let best: Upload | undefined;
    for (const upload of this.queue) {
      if (best && upload.deadlineMs >= best.deadlineMs) continue;
      const readable = this.hooks.readableBytes(upload.sequence);
      // Relayed bytes go out in chunks of at least MIN_CHUNK_BYTES, but for the rest before the
      // segment's last byte (held back until the relay verified the whole) and that byte.
      const last = upload.end === upload.totalBytes ? upload.end - 1 : upload.end;
      if (readable === undefined || (readable > upload.offset && readable >= Math.min(upload.offset + MIN_CHUNK_BYTES, last))) best = upload;
    }
    return best;
  }
}
