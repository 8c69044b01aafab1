// One peer connection: the wire protocol's session rules over a PeerTransport. It checks every
// message against the session (a violation is reported for a ban, never thrown), hands the bytes
// of the leg we download from the peer straight to its transfer (peer-download.ts), hands
// the peer's requests to its uploads (peer-uploads.ts), and pings the peer: its answers time our
// uplink's queue and tell us the peer's upload state.
import { createLogger } from '../logger.js';
import type { Clock, PeerTransport, TimerId } from '../types.js';
import type { UploadGovernor } from '../upload/upload-governor.js';
import {
  PROTOCOL_VERSION,
  dataPayloadLimit,
  decode,
  encode,
  MessageType,
  measuredPace,
  wireMs,
  wireMsDiff,
  wireUploadState,
  type PeerMessage,
  type SegmentStateValue,
} from '../wire/peer-protocol.js';
import { PeerAvailability } from './peer-availability.js';
import { PeerDownload, type LegSink, type PeerLeg } from './peer-download.js';
import { PeerUploads, type UploadHooks } from './peer-uploads.js';

const log = createLogger('shoal:core:peer');

/** We count as uploading to a peer this long after its last byte: its pings keep the governor's cadence (PaceController.pingIntervalMs). */
const PING_AFTER_UPLOAD_MS = 3000;
/** Burst-edge pings (pingNow) go at most this often to one peer: a delivery sample needs a span longer than timer noise (delivery-rate.ts). */
const MIN_SAMPLE_PING_GAP_MS = 250;

/** What a peer session needs from its pool. */
export interface PeerSessionHooks extends UploadHooks {
  /** The peer's handshake arrived. */
  onReady(peer: PeerSession): void;
  /** The peer's availability changed: all of it (sequence undefined) or one segment. */
  onAvailability(peer: PeerSession, sequence: number | undefined): void;
  /** The peer broke the protocol; the session is closed. The pool bans it. */
  onViolation(peer: PeerSession, reason: string): void;
  onClose(peer: PeerSession, reason: string | undefined): void;
  /** Bytes of a message other than data went out (control traffic: the uplink account's). */
  onControlBytesUp?(bytes: number): void;
}

export class PeerSession {
  readonly id: string;
  /** Set by the remote handshake. */
  remoteUploads = false;
  handshaken = false;
  /** The peer's upload state from its last ping or pong: the pace a new request gets, and the bytes queued ahead of it. */
  private advertised: { paceBytesPerS: number; backlogBytes: number; atMs: number } | undefined;
  /** What the peer says it has, fetches and relays, for the plan to read; its messages update it. */
  readonly availability = new PeerAvailability();
  /** The leg it brings us, its rate and its backoff, for the plan to read; the session drives it. */
  readonly download: PeerDownload;
  /** What the peer asked us for. */
  private readonly uploads: PeerUploads;
  /** Bytes of every message this peer sent us (mod 2^32): our pongs tell it what its uplink delivered. */
  private receivedBytes = 0;
  private pingTimer: TimerId | undefined;
  /** The pending ping is the slow one (to a peer we do not upload to). */
  private pingTimerSlow = false;
  private lastPingMs = -Infinity;
  private closed = false;

  constructor(
    private readonly transport: PeerTransport,
    private readonly clock: Clock,
    private readonly hooks: PeerSessionHooks,
    private readonly governor: UploadGovernor,
    initialThroughputBytesPerS: number,
  ) {
    this.id = transport.remotePeerId;
    this.download = new PeerDownload(clock, initialThroughputBytesPerS);
    this.uploads = new PeerUploads(
      {
        unsent: () => (this.closed ? 0 : transport.bufferedAmount),
        maxPayloadBytes: () => dataPayloadLimit(transport.maxMessageBytes),
        send: (message) => this.send(message),
        sendBytes: (bytes) => this.sendBytes(bytes),
        violation: (reason) => this.violation(reason),
        uploading: () => this.uploading(),
        pingNow: () => this.pingNow(),
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

  /** The rate a new request to this peer would get, and how long its queued uploads keep it waiting (PeerDownload.expectedRate). */
  get expectedRate(): { bytesPerS: number; waitMs: number } {
    return this.download.expectedRate(this.advertised);
  }

  /** The upload rate the peer last said it delivers, bytes/s: 0 when it does not serve, undefined before it said one it measured. */
  get advertisedRate(): number | undefined {
    return measuredPace(this.advertised?.paceBytesPerS);
  }

  /** Sends our handshake and availability. */
  start(uploads: boolean, firstSequence: number, states: SegmentStateValue[]): void {
    this.send({ type: 'handshake', version: PROTOCOL_VERSION, uploads });
    this.send({ type: 'availability', firstSequence, states });
  }

  isFetching(sequence: number): boolean {
    return this.availability.isFetching(sequence, this.clock.now());
  }

  /** A `fetching` of its lapsed lately (peer-availability.ts). */
  get lapsed(): boolean {
    return this.clock.now() < this.availability.lapsedUntilMs;
  }

  /**
   * Whether we may ask this peer for the segment: it has it or relays it, and we did not cancel a
   * leg of it here recently (chunks of that one may still be in the channel, and would be taken
   * for the new leg's: nothing in an ordered channel tells them apart).
   */
  mayRequest(sequence: number): boolean {
    return this.availability.serves(sequence) && !this.download.cancelledRecently(sequence);
  }

  /** Tells the peer our state of one segment changed. */
  announce(sequence: number, state: SegmentStateValue): void {
    this.send({ type: 'have', sequence, state });
  }

  /** Tells the peer we hold bytes [0, heldBytes) of a segment still arriving: it may ask for them. */
  announceProgress(sequence: number, heldBytes: number, totalBytes: number): void {
    this.send({ type: 'progress', sequence, heldBytes, totalBytes });
  }

  /** Asks for `leg`'s bytes, needed within `withinMs`; they go to `sink` as they arrive. */
  request(leg: PeerLeg, withinMs: number, sink: LegSink): void {
    this.send(this.download.request(leg, withinMs, sink));
  }

  /** Gives up `leg` (the plan moved it elsewhere): a cancel, if the peer was bringing it. */
  cancelLeg(leg: PeerLeg): void {
    const cancel = this.download.cancel(leg, this.advertised);
    if (cancel) this.send(cancel);
  }

  close(reason?: string): void {
    if (this.closed) return;
    this.transport.close();
    this.handleClose(reason ?? 'closed locally');
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
      if (bytes[0] !== MessageType.data) this.hooks.onControlBytesUp?.(bytes.length);
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
    this.download.close();
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
    const violation = this.dispatch(message);
    if (violation) this.violation(violation);
  }

  /** One message of the session; returns a violation, if it is one. */
  private dispatch(message: PeerMessage): string | undefined {
    switch (message.type) {
      case 'handshake':
        return 'second handshake';
      case 'availability':
        this.availability.replace(message.firstSequence, message.states, this.clock.now());
        this.hooks.onAvailability(this, undefined);
        return undefined;
      case 'have': {
        const flood = this.availability.update(message.sequence, message.state, this.clock.now());
        if (!flood) this.hooks.onAvailability(this, message.sequence);
        return flood;
      }
      case 'progress': {
        const changed = this.availability.progress(message.sequence, message.heldBytes, message.totalBytes, this.clock.now());
        if (!changed) this.hooks.onAvailability(this, message.sequence);
        return changed;
      }
      case 'request':
        return this.uploads.request(message.sequence, message.start, message.end, message.withinMs);
      case 'cancel':
        this.uploads.cancel(message.sequence);
        return undefined;
      case 'ping':
        this.learnUploadState(message.paceBytesPerS, message.backlogBytes);
        this.send({ type: 'pong', echoMs: message.sentMs, receivedMs: wireMs(this.clock.now()), ...this.ownUploadState(), deliveredBytes: this.receivedBytes });
        return undefined;
      case 'pong':
        this.learnUploadState(message.paceBytesPerS, message.backlogBytes);
        this.governor.delivered(this.id, message.echoMs, message.receivedMs, message.deliveredBytes);
        this.governor.delaySample(this.id, wireMsDiff(message.receivedMs, message.echoMs), wireMsDiff(wireMs(this.clock.now()), message.echoMs));
        return undefined;
      case 'data':
        return this.download.data(message.sequence, message.offset, message.totalBytes, message.payload, this.advertised);
      case 'done':
        return this.download.done(message.sequence, message.totalBytes);
      case 'absent':
      case 'busy': {
        // It said it has the segment, and has it not: a liar, or an eviction that crossed our request.
        // A relay may answer `absent` when its own copy failed: no lie, and it stays "fetching".
        const relayed = this.availability.relay(message.sequence) !== undefined;
        if (this.download.refused(message, relayed) && message.type === 'absent') this.availability.refused(message.sequence, relayed);
        return undefined;
      }
    }
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
    this.lastPingMs = this.clock.now();
    this.governor.pingSent(this.id, sentMs, this.uploads.sentBytes);
    this.send({ type: 'ping', sentMs, ...this.ownUploadState() });
    const now = this.clock.now();
    if (now - this.governor.lastSentMs >= PING_AFTER_UPLOAD_MS) return;
    this.pingTimerSlow = !this.uploadingHere(now);
    this.pingTimer = this.clock.setTimeout(() => this.ping(), this.governor.controller.pingIntervalMs(!this.pingTimerSlow));
  }

  private uploadingHere(now: number): boolean {
    // Queued counts, ready or not: a relayed segment's upload waits for its next bytes between chunks.
    return this.uploads.backlogBytes > 0 || now - this.uploads.lastSentMs < PING_AFTER_UPLOAD_MS;
  }

  /**
   * A burst of uploads to this peer started or ended: ping now, so that the span between two pings
   * holds the burst and no idle time (its pong makes a delivery sample of the link, not of demand);
   * at most every MIN_SAMPLE_PING_GAP_MS (a trickle of relayed bytes makes bursts of one chunk).
   */
  pingNow(): void {
    if (!this.handshaken || this.closed || this.clock.now() - this.lastPingMs < MIN_SAMPLE_PING_GAP_MS) return;
    if (this.pingTimer !== undefined) this.clock.clearTimeout(this.pingTimer);
    this.ping();
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

