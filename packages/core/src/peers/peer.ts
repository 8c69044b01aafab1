// One peer connection: the wire protocol's session rules over a PeerTransport. It checks every
// message against the session (a violation is reported for a ban, never thrown), assembles the
// segment we download from the peer, hands the peer's requests to its uploads (peer-uploads.ts),
// and pings the peer: its answers time our uplink's queue and tell us the peer's upload state.
import { createLogger } from '../logger.js';
import {
  PACE_UNMEASURED,
  PROTOCOL_VERSION,
  SegmentState,
  decode,
  encode,
  measuredPace,
  type PeerMessage,
  type SegmentStateValue,
  wireMs,
  wireMsDiff,
  wireUploadState,
} from '../wire/peer-protocol.js';
import type { Clock, PeerTransport, TimerId } from '../types.js';
import { PeerAvailability } from './peer-availability.js';
import { bytesFromPeer, downloadProgress, receivedPrefix, type Download, type DownloadProgress, type ResumedPrefix } from './peer-download.js';
import { PeerUploads, type UploadHooks } from './peer-uploads.js';
import type { UploadGovernor } from '../upload/upload-governor.js';

const log = createLogger('shoal:core:peer');

/** A cancelled transfer shorter than this says little about the peer's rate (request latency dominates). */
const MIN_RATE_SAMPLE_MS = 250;
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
/** We count as uploading to a peer this long after its last byte: its pings keep the governor's cadence (UploadGovernor.pingIntervalMs). */
const PING_AFTER_UPLOAD_MS = 3000;

/** What a peer session needs from the engine. */
export interface PeerSessionHooks extends UploadHooks {
  /** The peer's handshake arrived. */
  onReady(peer: PeerSession): void;
  /** The peer's availability changed: all of it (sequence undefined) or one segment. */
  onAvailability(peer: PeerSession, sequence: number | undefined): void;
  /** A chunk of the segment we are downloading from this peer arrived. */
  onProgress(peer: PeerSession, sequence: number, chunk: Uint8Array): void;
  /** The whole segment arrived (a buffer the engine owns). */
  onSegment(peer: PeerSession, sequence: number, bytes: Uint8Array): void;
  /**
   * The peer answered our request with absent or busy, or (`size`) a resumed transfer's size
   * differs from the first sender's: one of the two is wrong, we cannot tell which, so neither is
   * blamed and the bytes are dropped.
   */
  onRefused(peer: PeerSession, sequence: number, reason: 'absent' | 'busy' | 'size'): void;
  /** The peer broke the protocol; the session is closed. The engine bans it. */
  onViolation(peer: PeerSession, reason: string): void;
  onClose(peer: PeerSession, reason: string | undefined): void;
}

export class PeerSession {
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
  private readonly availability = new PeerAvailability();
  private download: Download | undefined;
  /** Sequences we cancelled: their trailing chunks are ignored, not violations. */
  private readonly cancelled = new Set<number>();
  /** What the peer asked us for. */
  private readonly uploads: PeerUploads;
  /** Bytes of every message this peer sent us (mod 2^32): our pongs tell it what its uplink delivered. */
  private receivedBytes = 0;
  private pingTimer: TimerId | undefined;
  /** The pending ping is the slow one (to a peer we do not upload to). */
  private pingTimerSlow = false;
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
    this.uploads = new PeerUploads(
      {
        unsent: () => (this.closed ? 0 : transport.bufferedAmount),
        send: (message) => this.send(message),
        sendBytes: (bytes) => this.sendBytes(bytes),
        violation: (reason) => this.violation(reason),
        uploading: () => this.uploading(),
      },
      hooks, governor, clock,
    );
    governor.add(this.uploads);
    transport.setEvents({
      message: (data) => this.receive(data),
      close: (reason) => this.handleClose(reason),
      drain: () => this.governor.pump(),
    });
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

  /** The upload rate the peer last said it delivers, bytes/s: 0 when it does not serve, undefined before it said one it measured. */
  get advertisedRate(): number | undefined {
    return measuredPace(this.advertised?.paceBytesPerS);
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
    return this.availability.newestHeld();
  }

  /** Sends our handshake and availability. */
  start(uploads: boolean, firstSequence: number, states: SegmentStateValue[]): void {
    this.send({ type: 'handshake', version: PROTOCOL_VERSION, uploads });
    this.send({ type: 'availability', firstSequence, states });
  }

  has(sequence: number): boolean {
    return this.availability.has(sequence);
  }

  /**
   * Whether we may ask this peer for the segment: it has it, and we did not cancel a transfer of
   * it here recently. Chunks of a cancelled transfer may still be in the channel, and would be
   * taken for the new transfer's (nothing in an ordered channel tells them apart).
   */
  mayRequest(sequence: number): boolean {
    return this.availability.serves(sequence) && !this.cancelled.has(sequence);
  }

  isFetching(sequence: number): boolean {
    return this.availability.isFetching(sequence);
  }

  get downloading(): number | undefined {
    return this.download?.sequence;
  }

  get downloadProgress(): DownloadProgress | undefined {
    return this.download && downloadProgress(this.download);
  }

  /** Tells the peer our state of one segment changed. */
  announce(sequence: number, state: SegmentStateValue): void {
    this.send({ type: 'have', sequence, state });
  }

  /** Asks for the segment; with `resumed`, for its bytes after those another peer sent (the whole is then assembled here). */
  request(sequence: number, resumed?: ResumedPrefix): void {
    this.cancelled.delete(sequence);
    const offset = resumed?.prefix.length ?? 0;
    this.download = { sequence, startedMs: this.clock.now(), buffer: undefined, receivedBytes: offset, resumed, relayed: !this.has(sequence) };
    this.send({ type: 'request', sequence, offset });
  }

  /** The segment we are downloading from this peer, as far as it arrived (for relaying it on), once its size is known. */
  get downloadBuffer(): { sequence: number; bytes: Uint8Array; receivedBytes: number } | undefined {
    const download = this.download;
    return download?.buffer && { sequence: download.sequence, bytes: download.buffer, receivedBytes: download.receivedBytes };
  }

  /** Cancels our download; returns the bytes received so far (from offset 0, a resume's prefix included; the engine owns them) and the segment's size if known. */
  cancelDownload(): { prefix: Uint8Array; totalBytes: number | undefined } {
    const download = this.download;
    if (!download) return { prefix: new Uint8Array(0), totalBytes: undefined };
    this.download = undefined;
    // A cancelled transfer's rate counts too: else a slow peer, whose transfers are all cancelled
    // before `done`, keeps its assumed start rate and is picked first again and again.
    const elapsedMs = this.clock.now() - download.startedMs;
    const sentBytes = bytesFromPeer(download);
    if (elapsedMs >= MIN_RATE_SAMPLE_MS) this.throughputBytesPerS = blendRate(this.throughputBytesPerS, sentBytes, elapsedMs);
    // Next to nothing arrived though the peer said nothing was queued ahead of us: silent or trickling.
    const idle = (this.advertised?.backlogBytes ?? 0) === 0;
    if (idle && elapsedMs >= MIN_RATE_SAMPLE_MS && (sentBytes / elapsedMs) * 1000 < STALLED_BYTES_PER_S) this.failed();
    this.cancelled.add(download.sequence);
    if (this.cancelled.size > 32) this.cancelled.delete(this.cancelled.values().next().value!);
    this.send({ type: 'cancel', sequence: download.sequence });
    return receivedPrefix(download);
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
    this.uploads.clear();
    this.governor.remove(this.uploads);
    this.governor.forgetPeer(this.id);
    this.hooks.onClose(this, reason);
  }

  private receive(data: Uint8Array): void {
    if (this.closed) return;
    this.receivedBytes = (this.receivedBytes + data.length) >>> 0;
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
        this.availability.replace(message.firstSequence, message.states);
        return this.hooks.onAvailability(this, undefined);
      case 'have': {
        const flood = this.availability.update(message.sequence, message.state);
        return flood ? this.violation(flood) : this.hooks.onAvailability(this, message.sequence);
      }
      case 'request':
        return this.uploads.request(message.sequence, message.offset);
      case 'cancel':
        return this.uploads.cancel(message.sequence);
      case 'ping':
        this.learnUploadState(message.paceBytesPerS, message.backlogBytes);
        return this.send({ type: 'pong', echoMs: message.sentMs, receivedMs: wireMs(this.clock.now()), ...this.ownUploadState(), deliveredBytes: this.receivedBytes });
      case 'pong':
        this.learnUploadState(message.paceBytesPerS, message.backlogBytes);
        this.governor.delivered(this.id, message.echoMs, message.receivedMs, message.deliveredBytes);
        return this.governor.delaySample(this.id, wireMsDiff(message.receivedMs, message.echoMs), wireMsDiff(wireMs(this.clock.now()), message.echoMs));
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
        this.throughputBytesPerS = blendRate(this.throughputBytesPerS, bytesFromPeer(download), elapsedMs);
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
          this.availability.refused(message.sequence, download.relayed);
          if (!download.relayed) this.failed();
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
      if (download.resumed && totalBytes !== download.resumed.totalBytes) {
        this.cancelDownload();
        return this.hooks.onRefused(this, sequence, 'size');
      }
      download.buffer = new Uint8Array(totalBytes);
      if (download.resumed) download.buffer.set(download.resumed.prefix);
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

  /** Sends a ping now, and the next one at the governor's cadence while this engine uploads. */
  private ping(): void {
    this.pingTimer = undefined;
    if (this.closed) return;
    const sentMs = wireMs(this.clock.now());
    this.governor.pingSent(this.id, sentMs);
    this.send({ type: 'ping', sentMs, ...this.ownUploadState() });
    const now = this.clock.now();
    if (now - this.governor.lastSentMs >= PING_AFTER_UPLOAD_MS) return;
    this.pingTimerSlow = !this.uploadingHere(now);
    this.pingTimer = this.clock.setTimeout(() => this.ping(), this.governor.pingIntervalMs(!this.pingTimerSlow));
  }

  private uploadingHere(now: number): boolean {
    // Queued counts, ready or not: a relayed segment's upload waits for its next bytes between chunks.
    return this.uploads.backlogBytes > 0 || now - this.uploads.lastSentMs < PING_AFTER_UPLOAD_MS;
  }

  /** Uploading began (to this peer, or over any after a pause): ping now unless a ping a second is under way. */
  uploading(): void {
    if (!this.handshaken || this.closed) return;
    if (this.pingTimer !== undefined && !this.pingTimerSlow) return;
    if (this.pingTimer !== undefined) this.clock.clearTimeout(this.pingTimer);
    this.pingTimerSlow = false;
    this.pingTimer = this.clock.setTimeout(() => this.ping(), 0);
  }

  /** What we relayed of this segment is void: a started upload of it ends (PeerUploads.abandonRelayed). */
  abandonRelayedUpload(sequence: number): void {
    if (!this.closed) this.uploads.abandonRelayed(sequence);
  }
}

/** A rate sample blended into a peer's download rate: half the old rate, half the new. */
function blendRate(bytesPerS: number, bytes: number, elapsedMs: number): number {
  return 0.5 * bytesPerS + 0.5 * ((bytes / elapsedMs) * 1000);
}
