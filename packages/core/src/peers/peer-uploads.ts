// What one peer asked us for: its queued uploads, handed to the upload governor as one source and
// sent as the governor paces them, the oldest ready one first. A segment we are still receiving is
// relayed as its bytes arrive; its last byte waits until our copy is verified (see PROTOCOL.md).
import { DATA_HEADER_BYTES, encodeDataInto, type PeerMessage } from '../wire/peer-protocol.js';
import type { Clock } from '../types.js';
import { MIN_CHUNK_BYTES } from '../upload/pace.js';
import type { UploadGovernor, UploadSource } from '../upload/upload-governor.js';

/**
 * Requests a peer may queue with us before it gets `busy`. Our own sessions never ask one peer for
 * more than one segment at a time; a peer that floods requests gets one upload at a time, served
 * oldest first among everyone's, so no more than its share of our uplink.
 */
const MAX_QUEUED_UPLOADS = 1;

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
  send(message: PeerMessage): void;
  sendBytes(bytes: Uint8Array): void;
  violation(reason: string): void;
  /** The governor sent data after a pause: the session's pings resume. */
  uploading(): void;
}

interface Upload {
  sequence: number;
  offset: number;
  /** Where the request started. */
  readonly startOffset: number;
  totalBytes: number;
  /** When the peer asked. */
  requestedMs: number;
  /** The data messages of the rest of the segment, written chunk by chunk as they are sent (one allocation per upload). */
  wire: Uint8Array | undefined;
  wireOffset: number;
}

export class PeerUploads implements UploadSource {
  private readonly queue: Upload[] = [];
  /** When data last went to this peer. */
  lastSentMs = -Infinity;

  constructor(
    private readonly channel: UploadChannel,
    private readonly hooks: UploadHooks,
    private readonly governor: UploadGovernor,
    private readonly clock: Clock,
  ) {}

  get bufferedAmount(): number {
    return this.channel.unsent();
  }

  get oldestUploadMs(): number | undefined {
    return this.next()?.requestedMs;
  }

  get backlogBytes(): number {
    let bytes = 0;
    for (const upload of this.queue) bytes += upload.totalBytes - upload.offset;
    return bytes;
  }

  uploading(): void {
    this.channel.uploading();
  }

  /** The peer asked for the segment from `offset` on. */
  request(sequence: number, offset: number): void {
    if (this.queue.some((upload) => upload.sequence === sequence)) return this.channel.violation(`second request for segment ${sequence}`);
    if (!this.hooks.uploadEnabled() || this.queue.length >= MAX_QUEUED_UPLOADS) return this.channel.send({ type: 'busy', sequence });
    const totalBytes = this.hooks.segmentSize(sequence);
    if (totalBytes === undefined || offset >= totalBytes) return this.channel.send({ type: 'absent', sequence });
    // Behind a backlog it would wait for too long, or while we yield to our own playback: ask elsewhere.
    if (!this.governor.accepts()) return this.channel.send({ type: 'busy', sequence });
    this.queue.push({ sequence, offset, startOffset: offset, totalBytes, requestedMs: this.clock.now(), wire: undefined, wireOffset: 0 });
    // Its pings come a second apart from now on: they time our uplink while we upload to it.
    this.channel.uploading();
    this.governor.pump();
  }

  cancel(sequence: number): void {
    const index = this.queue.findIndex((upload) => upload.sequence === sequence);
    if (index === -1) return;
    const [upload] = this.queue.splice(index, 1);
    this.governor.uploadCancelled(upload!.offset - upload!.startOffset);
  }

  /**
   * The bytes we relayed of this segment turned out bad (our copy failed verification), or are
   * gone: a started upload of it ends with `absent`, so that its rest never comes from another
   * copy (the peer would get a mix, and blame us).
   */
  abandonRelayed(sequence: number): void {
    const index = this.queue.findIndex((upload) => upload.sequence === sequence && upload.offset > 0);
    if (index === -1) return;
    this.queue.splice(index, 1);
    this.channel.send({ type: 'absent', sequence });
  }

  clear(): void {
    this.queue.length = 0;
  }

  /** Sends up to `maxBytes` of the oldest ready upload (the governor calls this); returns the payload bytes sent. */
  sendChunk(maxBytes: number): number {
    const upload = this.next();
    if (!upload) return 0;
    const readable = this.hooks.readableBytes(upload.sequence);
    const end = Math.min(upload.offset + maxBytes, upload.totalBytes, readable ?? 0);
    const payload = readable === undefined ? undefined : this.hooks.readSegment(upload.sequence, upload.offset, end);
    if (!payload) {
      // Evicted while we were serving it, or a relayed segment whose transfer failed.
      this.queue.splice(this.queue.indexOf(upload), 1);
      this.channel.send({ type: 'absent', sequence: upload.sequence });
      return 0;
    }
    if (!upload.wire) {
      const remaining = upload.totalBytes - upload.offset;
      // Chunks of MIN_CHUNK_BYTES or more, but for a relayed segment's last two (see next()).
      upload.wire = new Uint8Array(remaining + (Math.ceil(remaining / MIN_CHUNK_BYTES) + 1) * DATA_HEADER_BYTES);
    }
    const message = encodeDataInto(upload.wire.subarray(upload.wireOffset), upload.sequence, upload.offset, upload.totalBytes, payload);
    upload.wireOffset += message.length;
    this.channel.sendBytes(message);
    this.lastSentMs = this.clock.now();
    this.hooks.onBytesUp(payload.length);
    upload.offset = end;
    if (end === upload.totalBytes) {
      this.queue.splice(this.queue.indexOf(upload), 1);
      this.channel.send({ type: 'done', sequence: upload.sequence, totalBytes: upload.totalBytes });
    }
    return payload.length;
  }

  /** The oldest upload that can send now: a relayed segment waits for its next bytes to arrive (one gone is answered at once). */
  private next(): Upload | undefined {
    for (const upload of this.queue) {
      const readable = this.hooks.readableBytes(upload.sequence);
      if (readable === undefined) return upload;
      // Relayed bytes go out in chunks of at least MIN_CHUNK_BYTES, but for the rest before the
      // last byte (held back until the relay verified the whole) and that byte.
      if (readable > upload.offset && readable >= Math.min(upload.offset + MIN_CHUNK_BYTES, upload.totalBytes - 1)) return upload;
    }
    return undefined;
  }
}
