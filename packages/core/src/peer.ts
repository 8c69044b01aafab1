// One peer connection: the wire protocol's session rules over a PeerTransport. It checks every
// message against the session (a violation is reported for a ban, never thrown), assembles the
// segment we download from the peer, serves the peer's requests when the upload governor says
// so, and pings the peer: its answers time our uplink's queue and tell us the peer's upload state.
import { createLogger } from './logger.js';
import {
  DATA_HEADER_BYTES,
  PACE_UNMEASURED,
  PROTOCOL_VERSION,
  SegmentState,
  decode,
  encode,
  encodeDataInto,
  type PeerMessage,
  type SegmentStateValue,
  wireMs,
  wireMsDiff,
} from './peer-protocol.js';
import type { Clock, PeerTransport, TimerId } from './types.js';
import { MIN_CHUNK_BYTES, type UploadGovernor, type UploadSource } from './upload-governor.js';

const log = createLogger('shoal:core:peer');

/** A cancelled transfer shorter than this says little about the peer's rate (request latency dominates). */
const MIN_RATE_SAMPLE_MS = 250;
/**
 * Requests a peer may queue with us before it gets `busy`. Our own sessions never ask one peer for
 * more than one segment at a time; a peer that floods requests gets one upload at a time, served
 * oldest first among everyone's, so no more than its share of our uplink.
 */
const MAX_QUEUED_UPLOADS = 1;
/**
 * Segments a peer may announce at once (twice the availability map's 4096). Peers say `none` on
 * eviction, so an honest map stays near its store's size; one that only grows is a flood.
 */
const MAX_ANNOUNCED_SEGMENTS = 8192;
/**
 * A transfer from this peer that we cancelled while it delivered next to nothing (below
 * STALLED_BYTES_PER_S) though it said no upload was queued ahead of ours, or that it refused as
 * `absent` after announcing the segment: we leave the peer alone for 1 s, doubling with every such
 * failure in a row up to a minute, until it completes a transfer. Silent, trickling and lying peers
 * are starved this way; an honest peer that is slow, or busy serving others, is not held back.
 */
const FAILURE_BACKOFF_MS = 1000;
const MAX_FAILURE_BACKOFF_MS = 60_000;
const STALLED_BYTES_PER_S = 2048;
/**
 * While we upload (and for as long again after), pings measure our uplink's queueing delay and
 * tell every peer our upload state, this often. Otherwise only the handshake's ping does: an idle
 * peer's pace does not change.
 */
const PING_INTERVAL_MS = 1000;
const PING_AFTER_UPLOAD_MS = 3000;

/** What a peer session needs from the engine. */
export interface PeerSessionHooks {
  /** The peer's handshake arrived. */
  onReady(peer: PeerSession): void;
  /** The peer's availability changed: all of it (sequence undefined) or one segment. */
  onAvailability(peer: PeerSession, sequence: number | undefined): void;
  /** A chunk of the segment we are downloading from this peer arrived. */
  onProgress(peer: PeerSession, sequence: number, chunk: Uint8Array): void;
  /** The whole segment arrived (a buffer the engine owns). */
  onSegment(peer: PeerSession, sequence: number, bytes: Uint8Array): void;
  /** The peer answered our request with absent or busy. */
  onRefused(peer: PeerSession, sequence: number, reason: 'absent' | 'busy'): void;
  /** Size of a segment we can serve (stored, or being received and its size known: relayed as it arrives), or undefined. */
  segmentSize(sequence: number): number | undefined;
  /** How many bytes of it, from its start, may go out now (all once stored and verified), or undefined when we cannot serve it. */
  readableBytes(sequence: number): number | undefined;
  /** A copy of bytes [start, end) of a segment we serve, end at most its readable bytes. */
  readSegment(sequence: number, start: number, end: number): Uint8Array | undefined;
  /** Whether we serve requests right now. */
  uploadEnabled(): boolean;
  onBytesUp(bytes: number): void;
  /** The peer broke the protocol; the session is closed. The engine bans it. */
  onViolation(peer: PeerSession, reason: string): void;
  onClose(peer: PeerSession, reason: string | undefined): void;
}

interface Download {
  sequence: number;
  startedMs: number;
  buffer: Uint8Array | undefined;
  receivedBytes: number;
  /** Asked while the peer was still receiving it (a relay): `absent` then is no lie. */
  relayed: boolean;
}

interface Upload {
  sequence: number;
  offset: number;
  totalBytes: number;
  /** When the peer asked. */
  requestedMs: number;
  /** The data messages of the rest of the segment, written chunk by chunk as they are sent (one allocation per upload). */
  wire: Uint8Array | undefined;
  wireOffset: number;
}

export class PeerSession implements UploadSource {
  readonly id: string;
  /** Set by the remote handshake. */
  remoteUploads = false;
  handshaken = false;
  /** Download rate from this peer, bytes/s: an average over finished transfers. */
  throughputBytesPerS: number;
  /** The peer said busy, or failed us (see FAILURE_BACKOFF_MS): do not ask it again before this time. */
  busyUntilMs = 0;
  /** Transfers it failed in a row. */
  private failures = 0;
  /** The peer's upload state from its last ping or pong: the pace a new request gets, and the bytes queued ahead of it. */
  private advertised: { paceBytesPerS: number; backlogBytes: number; atMs: number } | undefined;
  private readonly availability = new Map<number, SegmentStateValue>();
  private download: Download | undefined;
  /** Sequences we cancelled: their trailing chunks are ignored, not violations. */
  private readonly cancelled = new Set<number>();
  /**
   * Segments it is fetching and can relay: it announced `fetching` a second time (a relay does so
   * once its first bytes arrive; see PROTOCOL.md). Only these of its `fetching` segments are asked for.
   */
  private readonly relaying = new Set<number>();
  private readonly uploads: Upload[] = [];
  private pingTimer: TimerId | undefined;
  private closed = false;

  constructor(
    private readonly transport: PeerTransport,
    private readonly clock: Clock,
    private readonly hooks: PeerSessionHooks,
    private readonly governor: UploadGovernor,
    initialThroughputBytesPerS: number,
  ) {
    this.id = transport.remotePeerId;
    this.throughputBytesPerS = initialThroughputBytesPerS;
    transport.setEvents({
      message: (data) => this.receive(data),
      close: (reason) => this.handleClose(reason),
      drain: () => this.governor.pump(),
    });
    governor.add(this);
  }

  /**
   * The rate a new request to this peer would get, bytes/s: what the peer says it paces at now
   * (0: it does not serve), else (nothing said, or not measured yet) what we measured from it.
   * And how long its queued uploads will keep a new request waiting.
   */
  get expectedRate(): { bytesPerS: number; waitMs: number } {
    const advertised = this.advertised;
    const said = advertised?.paceBytesPerS ?? PACE_UNMEASURED;
    const bytesPerS = said === PACE_UNMEASURED ? this.throughputBytesPerS : said;
    return { bytesPerS, waitMs: bytesPerS > 0 ? ((advertised?.backlogBytes ?? 0) / bytesPerS) * 1000 : Infinity };
  }

  /**
   * It failed us lately and its backoff runs (see FAILURE_BACKOFF_MS): what it announces is not worth
   * waiting for, nor a reason for an elected seeder to leave a segment to it.
   */
  get failing(): boolean {
    return this.failures > 0 && this.busyUntilMs > this.clock.now();
  }

  /** The newest segment it says it has (undefined: none). */
  newestHeld(): number | undefined {
    let newest: number | undefined;
    for (const [sequence, state] of this.availability) if (state === SegmentState.has && (newest === undefined || sequence > newest)) newest = sequence;
    return newest;
  }

  get bufferedAmount(): number {
    return this.closed ? 0 : this.transport.bufferedAmount;
  }

  get oldestUploadMs(): number | undefined {
    return this.nextUpload()?.requestedMs;
  }

  /** The oldest upload that can send now: a relayed segment waits for its next bytes to arrive (one gone is answered at once). */
  private nextUpload(): Upload | undefined {
    for (const upload of this.uploads) {
      const readable = this.hooks.readableBytes(upload.sequence);
      if (readable === undefined) return upload; // gone: answered at once
      // Relayed bytes go out in chunks of at least MIN_CHUNK_BYTES, but for the rest before the
      // last byte (held back until the relay verified the whole) and that byte.
      if (readable > upload.offset && readable >= Math.min(upload.offset + MIN_CHUNK_BYTES, upload.totalBytes - 1)) return upload;
    }
    return undefined;
  }

  get backlogBytes(): number {
    let bytes = 0;
    for (const upload of this.uploads) bytes += upload.totalBytes - upload.offset;
    return bytes;
  }

  /** Sends our handshake and availability. */
  start(uploads: boolean, firstSequence: number, states: SegmentStateValue[]): void {
    this.send({ type: 'handshake', version: PROTOCOL_VERSION, uploads });
    this.send({ type: 'availability', firstSequence, states });
  }

  has(sequence: number): boolean {
    return this.availability.get(sequence) === SegmentState.has;
  }

  /**
   * Whether we may ask this peer for the segment: it has it, and we did not cancel a transfer of
   * it here recently. Chunks of a cancelled transfer may still be in the channel, and would be
   * taken for the new transfer's (nothing in an ordered channel tells them apart).
   */
  mayRequest(sequence: number): boolean {
    return (this.has(sequence) || this.relaying.has(sequence)) && !this.cancelled.has(sequence);
  }

  isFetching(sequence: number): boolean {
    return this.availability.get(sequence) === SegmentState.fetching;
  }

  get downloading(): number | undefined {
    return this.download?.sequence;
  }

  get downloadProgress(): { startedMs: number; receivedBytes: number; totalBytes: number | undefined } | undefined {
    const download = this.download;
    return download && { startedMs: download.startedMs, receivedBytes: download.receivedBytes, totalBytes: download.buffer?.length };
  }

  /** Tells the peer our state of one segment changed. */
  announce(sequence: number, state: SegmentStateValue): void {
    this.send({ type: 'have', sequence, state });
  }

  request(sequence: number): void {
    this.cancelled.delete(sequence);
    this.download = { sequence, startedMs: this.clock.now(), buffer: undefined, receivedBytes: 0, relayed: !this.has(sequence) };
    this.send({ type: 'request', sequence, offset: 0 });
  }

  /** The segment we are downloading from this peer, as far as it arrived (for relaying it on), once its size is known. */
  get downloadBuffer(): { sequence: number; bytes: Uint8Array; receivedBytes: number } | undefined {
    const download = this.download;
    return download?.buffer && { sequence: download.sequence, bytes: download.buffer, receivedBytes: download.receivedBytes };
  }

  /** Cancels our download; returns the bytes received so far (from offset 0, the engine owns them) and the segment's size if known. */
  cancelDownload(): { prefix: Uint8Array; totalBytes: number | undefined } {
    const download = this.download;
    if (!download) return { prefix: new Uint8Array(0), totalBytes: undefined };
    this.download = undefined;
    // A cancelled transfer's rate counts too: else a slow peer, whose transfers are all cancelled
    // before `done`, keeps its assumed start rate and is picked first again and again.
    const elapsedMs = this.clock.now() - download.startedMs;
    if (elapsedMs >= MIN_RATE_SAMPLE_MS) this.throughputBytesPerS = blendRate(this.throughputBytesPerS, download.receivedBytes, elapsedMs);
    // Next to nothing arrived though the peer said nothing was queued ahead of us: silent or trickling.
    const idle = (this.advertised?.backlogBytes ?? 0) === 0;
    if (idle && elapsedMs >= MIN_RATE_SAMPLE_MS && (download.receivedBytes / elapsedMs) * 1000 < STALLED_BYTES_PER_S) this.failed();
    this.cancelled.add(download.sequence);
    if (this.cancelled.size > 32) this.cancelled.delete(this.cancelled.values().next().value!);
    this.send({ type: 'cancel', sequence: download.sequence });
    return { prefix: download.buffer ? download.buffer.subarray(0, download.receivedBytes) : new Uint8Array(0), totalBytes: download.buffer?.length };
  }

  close(reason?: string): void {
    if (this.closed) return;
    this.transport.close();
    this.handleClose(reason ?? 'closed locally');
  }

  private failed(): void {
    const backoffMs = Math.min(MAX_FAILURE_BACKOFF_MS, FAILURE_BACKOFF_MS * 2 ** this.failures);
    this.failures += 1;
    this.busyUntilMs = Math.max(this.busyUntilMs, this.clock.now() + backoffMs);
  }

  private violation(reason: string): void {
    if (this.closed) return;
    log(`${this.id.slice(0, 8)} violation: ${reason}`);
    this.hooks.onViolation(this, reason);
    this.close(`protocol violation: ${reason}`);
  }

  private send(message: PeerMessage): void {
    this.sendBytes(encode(message));
  }

  private sendBytes(bytes: Uint8Array): void {
    if (this.closed) return;
    try {
      this.transport.send(bytes);
    } catch (error) {
      // A channel that fails to send is gone; closing is the whole recovery.
      this.close(`send failed: ${String(error)}`);
    }
  }

  private handleClose(reason: string | undefined): void {
    if (this.closed) return;
    this.closed = true;
    if (this.pingTimer !== undefined) this.clock.clearTimeout(this.pingTimer);
    this.pingTimer = undefined;
    this.uploads.length = 0;
    this.governor.remove(this);
    this.governor.forgetPeer(this.id);
    this.hooks.onClose(this, reason);
  }

  private receive(data: Uint8Array): void {
    if (this.closed) return;
    const result = decode(data);
    if (!result.ok) return this.violation(`${result.code}: ${result.detail}`);
    const message = result.message;
    if (!this.handshaken) {
      if (message.type !== 'handshake') return this.violation(`${message.type} before handshake`);
      if (message.version !== PROTOCOL_VERSION) return this.close(`protocol version ${message.version} not supported`);
      this.handshaken = true;
      this.remoteUploads = message.uploads;
      this.ping();
      return this.hooks.onReady(this);
    }
    switch (message.type) {
      case 'handshake':
        return this.violation('second handshake');
      case 'availability':
        replaceAvailability(this.availability, message.firstSequence, message.states);
        return this.hooks.onAvailability(this, undefined);
      case 'have':
        if (message.state !== SegmentState.none && !this.availability.has(message.sequence) && this.availability.size >= MAX_ANNOUNCED_SEGMENTS) {
          return this.violation(`announced more than ${MAX_ANNOUNCED_SEGMENTS} segments at once`);
        }
        if (message.state === SegmentState.fetching && this.isFetching(message.sequence)) this.relaying.add(message.sequence);
        else this.relaying.delete(message.sequence);
        if (this.relaying.size > 64) this.relaying.delete(this.relaying.values().next().value!);
        if (message.state === SegmentState.none) this.availability.delete(message.sequence);
        else this.availability.set(message.sequence, message.state);
        return this.hooks.onAvailability(this, message.sequence);
      case 'request':
        return this.queueUpload(message.sequence, message.offset);
      case 'cancel': {
        const index = this.uploads.findIndex((upload) => upload.sequence === message.sequence);
        if (index !== -1) this.uploads.splice(index, 1);
        return;
      }
      case 'ping':
        this.learnUploadState(message.paceBytesPerS, message.backlogBytes);
        return this.send({ type: 'pong', echoMs: message.sentMs, receivedMs: wireMs(this.clock.now()), ...this.ownUploadState() });
      case 'pong':
        this.learnUploadState(message.paceBytesPerS, message.backlogBytes);
        return this.governor.delaySample(this.id, wireMsDiff(message.receivedMs, message.echoMs));
      case 'data':
        return this.receiveData(message.sequence, message.offset, message.totalBytes, message.payload);
      case 'done': {
        const download = this.download;
        if (!download || download.sequence !== message.sequence) {
          if (this.cancelled.has(message.sequence)) return;
          return this.violation(`done for segment ${message.sequence} never requested`);
        }
        const total = download.buffer ? download.buffer.length : 0;
        if (message.totalBytes !== total || download.receivedBytes !== total || total === 0) {
          return this.violation(`done after ${download.receivedBytes} of ${message.totalBytes} bytes`);
        }
        this.download = undefined;
        this.failures = 0;
        const elapsedMs = Math.max(this.clock.now() - download.startedMs, 1);
        this.throughputBytesPerS = blendRate(this.throughputBytesPerS, total, elapsedMs);
        return this.hooks.onSegment(this, message.sequence, download.buffer!);
      }
      case 'absent':
      case 'busy': {
        const download = this.download;
        if (download?.sequence !== message.sequence) return; // an answer to a cancelled request
        this.download = undefined;
        if (message.type === 'busy') this.busyUntilMs = this.clock.now() + 1000;
        else {
          // It said it has the segment, and has it not: a liar, or an eviction that crossed our
          // request. A relay may answer `absent` when its own copy failed: it stays "fetching"
          // (live-edge seeding counts on that), not asked again before its next `have`.
          this.relaying.delete(message.sequence);
          if (!download.relayed) {
            this.availability.delete(message.sequence);
            this.failed();
          }
        }
        return this.hooks.onRefused(this, message.sequence, message.type);
      }
    }
  }

  private receiveData(sequence: number, offset: number, totalBytes: number, payload: Uint8Array): void {
    const download = this.download;
    if (!download || download.sequence !== sequence) {
      if (this.cancelled.has(sequence)) return;
      return this.violation(`data for segment ${sequence} never requested`);
    }
    if (!download.buffer) {
      if (totalBytes === 0) return this.violation('empty segment');
      download.buffer = new Uint8Array(totalBytes);
    }
    if (totalBytes !== download.buffer.length) return this.violation(`segment size changed from ${download.buffer.length} to ${totalBytes}`);
    if (offset !== download.receivedBytes) return this.violation(`chunk at ${offset}, expected ${download.receivedBytes}`);
    download.buffer.set(payload, offset);
    download.receivedBytes += payload.length;
    this.hooks.onProgress(this, sequence, payload);
    // Uploads relaying this segment may have new bytes to send.
    this.governor.pump();
  }

  private learnUploadState(paceBytesPerS: number, backlogBytes: number): void {
    this.advertised = { paceBytesPerS, backlogBytes, atMs: this.clock.now() };
  }

  private ownUploadState(): { paceBytesPerS: number; backlogBytes: number } {
    return wireUploadState(this.governor.advertised, this.hooks.uploadEnabled());
  }

  /** Sends a ping now, and the next one in a second while this engine uploads. */
  private ping(): void {
    this.pingTimer = undefined;
    if (this.closed) return;
    this.send({ type: 'ping', sentMs: wireMs(this.clock.now()), ...this.ownUploadState() });
    if (this.clock.now() - this.governor.lastSentMs < PING_AFTER_UPLOAD_MS) this.pingTimer = this.clock.setTimeout(() => this.ping(), PING_INTERVAL_MS);
  }

  /** The governor sent data (over any peer): ping again if we were idle. */
  uploading(): void {
    if (this.pingTimer === undefined && this.handshaken && !this.closed) this.pingTimer = this.clock.setTimeout(() => this.ping(), 0);
  }

  private queueUpload(sequence: number, offset: number): void {
    if (this.uploads.some((upload) => upload.sequence === sequence)) return this.violation(`second request for segment ${sequence}`);
    if (!this.hooks.uploadEnabled() || this.uploads.length >= MAX_QUEUED_UPLOADS) return this.send({ type: 'busy', sequence });
    const totalBytes = this.hooks.segmentSize(sequence);
    if (totalBytes === undefined || offset >= totalBytes) return this.send({ type: 'absent', sequence });
    // Behind a backlog it would wait for too long, or while we yield to our own playback: ask elsewhere.
    if (!this.governor.accepts()) return this.send({ type: 'busy', sequence });
    this.uploads.push({ sequence, offset, totalBytes, requestedMs: this.clock.now(), wire: undefined, wireOffset: 0 });
    this.governor.pump();
  }

  /**
   * The bytes we relayed of this segment turned out bad (our copy failed verification), or are
   * gone: a started upload of it ends with `absent`, so that its rest never comes from another
   * copy (the peer would get a mix, and blame us).
   */
  abandonRelayedUpload(sequence: number): void {
    const index = this.uploads.findIndex((upload) => upload.sequence === sequence && upload.offset > 0);
    if (index === -1 || this.closed) return;
    this.uploads.splice(index, 1);
    this.send({ type: 'absent', sequence });
  }

  /** Sends up to `maxBytes` of the oldest upload (the governor calls this); returns the payload bytes sent. */
  sendChunk(maxBytes: number): number {
    const upload = this.nextUpload();
    if (!upload || this.closed) return 0;
    const readable = this.hooks.readableBytes(upload.sequence);
    const end = Math.min(upload.offset + maxBytes, upload.totalBytes, readable ?? 0);
    const payload = readable === undefined ? undefined : this.hooks.readSegment(upload.sequence, upload.offset, end);
    if (!payload) {
      // Evicted while we were serving it, or a relayed segment whose transfer failed.
      this.uploads.splice(this.uploads.indexOf(upload), 1);
      this.send({ type: 'absent', sequence: upload.sequence });
      return 0;
    }
    if (!upload.wire) {
      const remaining = upload.totalBytes - upload.offset;
      // Chunks of MIN_CHUNK_BYTES or more, but for a relayed segment's last two (see nextUpload).
      upload.wire = new Uint8Array(remaining + (Math.ceil(remaining / MIN_CHUNK_BYTES) + 1) * DATA_HEADER_BYTES);
    }
    const message = encodeDataInto(upload.wire.subarray(upload.wireOffset), upload.sequence, upload.offset, upload.totalBytes, payload);
    upload.wireOffset += message.length;
    this.sendBytes(message);
    this.hooks.onBytesUp(payload.length);
    upload.offset = end;
    if (end === upload.totalBytes) {
      this.uploads.splice(this.uploads.indexOf(upload), 1);
      this.send({ type: 'done', sequence: upload.sequence, totalBytes: upload.totalBytes });
    }
    return payload.length;
  }
}

/** A rate sample blended into a peer's download rate: half the old rate, half the new. */
function blendRate(bytesPerS: number, bytes: number, elapsedMs: number): number {
  return 0.5 * bytesPerS + 0.5 * ((bytes / elapsedMs) * 1000);
}

/** A peer's whole availability map replaces what we knew of it. */
function replaceAvailability(availability: Map<number, SegmentStateValue>, firstSequence: number, states: readonly SegmentStateValue[]): void {
  availability.clear();
  states.forEach((state, i) => {
    if (state !== SegmentState.none) availability.set(firstSequence + i, state);
  });
}

/** Our upload state as pings carry it (32-bit fields); a pace of 0 says we do not serve. */
function wireUploadState(advertised: { paceBytesPerS: number; backlogBytes: number }, serving: boolean): { paceBytesPerS: number; backlogBytes: number } {
  return { paceBytesPerS: serving ? Math.min(advertised.paceBytesPerS, PACE_UNMEASURED) : 0, backlogBytes: Math.min(advertised.backlogBytes, 0xffff_ffff) };
}
