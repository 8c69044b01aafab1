// Transfers: one Transfer per segment this stream is getting, over HTTP or from a peer, until its
// bytes are in the store or its loads rejected (then it leaves the map). States: http | p2p →
// verifying → done; verifying → parked (the manifest does not list the bytes yet) → verifying; or
// failed. A cancelled or orphaned P2P transfer resumes over HTTP with a Range request for the rest
// (resumeOverHttp); a transfer nobody needs any more is dropped.
import type { EngineEmit, StreamStats } from './engine-events.js';
import { ShoalError, isShoalError } from './errors.js';
import type { SegmentVerifier } from './integrity.js';
import { createLogger } from './logger.js';
import type { OriginThroughput } from './origin-throughput.js';
import type { PendingLoads, LoadTiming } from './pending-loads.js';
import type { PeerPool } from './peer-pool.js';
import { SegmentState } from './peer-protocol.js';
import { MAX_WASTED_P2P_TRANSFERS, estimatedSegmentBytes } from './scheduler.js';
import type { PeerSession } from './peer.js';
import type { Clock, HttpClient, HttpTransfer, SegmentRef, SegmentSource, SegmentStore } from './types.js';

const log = createLogger('shoal:core:transfers');

/** Checks of P2P bytes the integrity manifest does not list yet, before they are given up (a live manifest lags its playlist). */
const MAX_INTEGRITY_CHECKS = 3;
/** `verifying`: bytes complete, integrity check running; `parked`: complete P2P bytes waiting for the next manifest. */
export type TransferState = 'http' | 'p2p' | 'verifying' | 'parked';

export class Transfer {
  /** The peer that sent the P2P bytes, kept after an HTTP resume: banned if the whole fails verification. */
  p2pPeer: PeerSession | undefined;
  http: HttpTransfer | undefined;
  /** Bytes received over P2P before an HTTP Range resume. */
  prefix: Uint8Array | undefined;
  p2pBytes = 0;
  httpBytes = 0;
  firstByteMs: number | undefined;
  /** The origin request for the whole segment, if one runs or ran (not a Range resume). */
  origin: { requestMs: number; firstByteMs: number | undefined } | undefined;
  /** Integrity verdicts asked for these bytes so far. */
  checks = 0;
  /** While parked: the complete P2P bytes, checked again at `recheckAtMs` rather than downloaded again. */
  parked: { bytes: Uint8Array; recheckAtMs: number } | undefined;
  /** While verifying: the complete bytes (relayed to peers but for their last byte). */
  verifying: Uint8Array | undefined;
  /** While over HTTP: bytes the request is expected to bring (a Range's length, else the segment's estimated size) and has brought. */
  httpExpected = { bytes: 0, received: 0 };

  constructor(
    readonly sequence: number,
    public state: TransferState,
    /** The peer serving the transfer now. */
    public peer: PeerSession | undefined,
    /** A live-edge seeding fetch: it goes on when the load that asked for it is aborted. */
    readonly seed: boolean,
  ) {
    this.p2pPeer = peer;
  }
}

/** The stream a Transfers room works for. */
export interface TransferStream {
  readonly key: string;
  readonly refs: Map<number, SegmentRef>;
  readonly waiters: PendingLoads;
  readonly pool: PeerPool;
  readonly stats: Omit<StreamStats, 'peers'>;
  readonly seeding: { failed(sequence: number, nowMs: number): void };
  /** The stream's bitrate, bytes per second of media, learnt from completed segments. */
  bytesPerS: number;
}

export interface TransferDeps {
  clock: Clock;
  http: HttpClient;
  store: SegmentStore;
  verifier: SegmentVerifier;
  throughput: OriginThroughput;
  emit: EngineEmit;
  isDestroyed(): boolean;
  /** Something changed that a plan reads: plan again soon. */
  replan(): void;
}

/** One stream's transfers, by segment sequence. */
export class Transfers {
  private readonly bySequence = new Map<number, Transfer>();
  /** P2P transfers per segment whose bytes were thrown away; at MAX_WASTED_P2P_TRANSFERS the segment comes over HTTP only. */
  private readonly wastedP2P = new Map<number, number>();

  constructor(private readonly stream: TransferStream, private readonly deps: TransferDeps) {}

  get(sequence: number): Transfer | undefined {
    return this.bySequence.get(sequence);
  }

  has(sequence: number): boolean {
    return this.bySequence.has(sequence);
  }

  get size(): number {
    return this.bySequence.size;
  }

  sequences(): IterableIterator<number> {
    return this.bySequence.keys();
  }

  /**
   * Bytes each download under way (HTTP or P2P) is still to receive, what they will take of the
   * downlink; `sizeBytes` gives the size of a segment whose size is not known yet.
   */
  downloadsLeftBytes(sizeBytes: (sequence: number) => number): number[] {
    const left: number[] = [];
    for (const transfer of this.bySequence.values()) {
      if (transfer.state === 'http') left.push(Math.max(transfer.httpExpected.bytes - transfer.httpExpected.received, 0));
      else if (transfer.state === 'p2p') {
        const progress = transfer.peer?.downloadProgress;
        if (progress) left.push(Math.max((progress.totalBytes ?? sizeBytes(transfer.sequence)) - progress.receivedBytes, 0));
      }
    }
    return left;
  }

  anyOverHttp(): boolean {
    for (const transfer of this.bySequence.values()) if (transfer.state === 'http') return true;
    return false;
  }

  anyOverP2P(): boolean {
    for (const transfer of this.bySequence.values()) if (transfer.state === 'p2p') return true;
    return false;
  }

  /** P2P transfers of the segment whose bytes were thrown away (the plan's cap reads it). */
  wastedP2PTransfers(sequence: number): number {
    return this.wastedP2P.get(sequence) ?? 0;
  }

  /** Forgets the waste count of segments no longer in the playlist. */
  forget(inPlaylist: (sequence: number) => boolean): void {
    for (const sequence of this.wastedP2P.keys()) if (!inPlaylist(sequence)) this.wastedP2P.delete(sequence);
  }

  startHttp(sequence: number, seed: boolean): void {
    const transfer = this.start(sequence, 'http', undefined, seed);
    this.runHttp(transfer, undefined);
  }

  startP2P(sequence: number, peer: PeerSession): void {
    this.start(sequence, 'p2p', peer, false);
    peer.request(sequence);
  }

  /** The plan cancels a P2P transfer: the rest comes over HTTP (a Range request after what arrived), or it is dropped. */
  cancelP2P(sequence: number, resumeOverHttp: boolean): void {
    const transfer = this.bySequence.get(sequence);
    if (!transfer?.peer) return;
    const { prefix, totalBytes } = transfer.peer.cancelDownload();
    log(`#${sequence} P2P cancelled after ${prefix.length} bytes${resumeOverHttp ? ', the rest over HTTP' : ''}`, this.stream.key);
    if (resumeOverHttp) this.resumeOverHttp(transfer, prefix, totalBytes);
    else this.drop(transfer);
  }

  /**
   * A segment still arriving from a peer, for relaying it on as it arrives: its bytes so far and
   * how many may go out. The last byte waits until the whole is verified and stored, so a peer
   * that gets bad bytes through us gets no `done` from us: we answer `absent` when our copy fails,
   * and the peer that sent them is the one banned (by us).
   */
  relay(sequence: number): { bytes: Uint8Array; readableBytes: number } | undefined {
    const transfer = this.bySequence.get(sequence);
    // Before its first bytes a transfer's size is not known (nor is it announced): a request then
    // gets `absent`, and onChunk announces the relay once they arrive.
    const received = transfer?.state === 'p2p' ? transfer.peer?.downloadBuffer : undefined;
    if (received?.sequence === sequence) return { bytes: received.bytes, readableBytes: Math.min(received.receivedBytes, received.bytes.length - 1) };
    const complete = transfer?.verifying ?? transfer?.parked?.bytes;
    return complete && { bytes: complete, readableBytes: complete.length - 1 };
  }

  /** The manifest may list parked bytes now: verify them again. */
  recheckParked(transfer: Transfer): void {
    void this.complete(transfer, transfer.parked!.bytes);
  }

  /** Parked P2P bytes the player cannot wait for any longer: the origin's copy replaces them. */
  giveUpParked(transfer: Transfer): void {
    transfer.parked = undefined;
    this.stream.pool.abandonRelayedUploads(transfer.sequence);
    this.wastedP2P.set(transfer.sequence, MAX_WASTED_P2P_TRANSFERS);
    this.resumeOverHttp(transfer, new Uint8Array(0), undefined);
  }

  /** The last load waiting for the segment was aborted: an HTTP transfer nobody waits for is waste (unless it seeds the swarm); P2P prefetch may go on. */
  abandon(sequence: number): void {
    const transfer = this.bySequence.get(sequence);
    if (transfer && transfer.state === 'http' && !transfer.seed) this.drop(transfer);
  }

  destroy(): void {
    for (const transfer of this.bySequence.values()) transfer.http?.abort();
    this.bySequence.clear();
  }

  // ---- what the peers deliver ----

  onChunk(peer: PeerSession, sequence: number, chunk: Uint8Array): void {
    const transfer = this.bySequence.get(sequence);
    if (!transfer || transfer.peer !== peer) return;
    transfer.firstByteMs ??= this.deps.clock.now();
    // Its size is known now: peers may ask us for it, and get it relayed as it arrives.
    if (transfer.p2pBytes === 0) this.stream.pool.announceRelaying(sequence);
    transfer.p2pBytes += chunk.length;
    this.deps.throughput.receivedBytes += chunk.length;
    this.stream.stats.p2pBytes += chunk.length;
    this.deps.emit('bytes-down', { streamKey: this.stream.key, source: 'p2p', bytes: chunk.length });
  }

  onSegment(peer: PeerSession, sequence: number, bytes: Uint8Array): void {
    const transfer = this.bySequence.get(sequence);
    if (transfer && transfer.peer === peer) void this.complete(transfer, bytes);
  }

  onRefused(peer: PeerSession, sequence: number): void {
    const transfer = this.bySequence.get(sequence);
    if (transfer && transfer.peer === peer) this.drop(transfer);
  }

  /** A peer leaving mid-transfer must not stall the player: keep what arrived, fetch the rest over HTTP. What a banned peer sent is not kept. */
  onPeerGone(peer: PeerSession, banned: boolean): void {
    const sequence = peer.downloading;
    const transfer = sequence !== undefined ? this.bySequence.get(sequence) : undefined;
    if (!transfer || transfer.peer !== peer) return;
    const { prefix, totalBytes } = peer.cancelDownload();
    const kept = banned ? new Uint8Array(0) : prefix;
    if (this.stream.waiters.has(transfer.sequence)) this.resumeOverHttp(transfer, kept, totalBytes);
    else this.drop(transfer);
  }

  // ---- transitions ----

  private start(sequence: number, state: 'http' | 'p2p', peer: PeerSession | undefined, seed: boolean): Transfer {
    const transfer = new Transfer(sequence, state, peer, seed);
    this.bySequence.set(sequence, transfer);
    // An origin fetch is news (live-edge seeding: others wait for it); a request to a peer is not
    // until its first bytes arrive (many are answered busy, and each try would cost two `have`s).
    if (state === 'http') this.stream.pool.announce(sequence, SegmentState.fetching);
    return transfer;
  }

  private isCurrent(transfer: Transfer): boolean {
    return this.bySequence.get(transfer.sequence) === transfer && !this.deps.isDestroyed();
  }

  /** P2P → HTTP: with a prefix and a known size, a Range request for the rest; else the whole segment again. */
  private resumeOverHttp(transfer: Transfer, prefix: Uint8Array, totalBytes: number | undefined): void {
    transfer.state = 'http';
    transfer.peer = undefined;
    if (prefix.length > 0 && totalBytes !== undefined) {
      transfer.prefix = prefix;
      this.runHttp(transfer, totalBytes);
    } else {
      transfer.p2pBytes = 0;
      transfer.p2pPeer = undefined;
      this.runHttp(transfer, undefined);
    }
  }

  /** HTTP for the whole segment, or (after a P2P prefix) a Range request for its remainder. */
  private runHttp(transfer: Transfer, totalBytes: number | undefined): void {
    const { clock, emit } = this.deps;
    const stream = this.stream;
    const ref = stream.refs.get(transfer.sequence)!;
    const base = ref.byteRange?.start ?? 0;
    const prefixLength = transfer.prefix?.length ?? 0;
    const range =
      prefixLength > 0 && totalBytes !== undefined ? { start: base + prefixLength, end: base + totalBytes } : ref.byteRange;
    const startedMs = clock.now();
    const { throughput } = this.deps;
    const linkBytesAtStart = throughput.receivedBytes;
    const expected = (transfer.httpExpected = { bytes: range ? range.end - range.start : estimatedSegmentBytes(ref, stream.bytesPerS), received: 0 });
    // This request's timing; the player's too when the whole segment comes from the origin.
    const timing = { requestMs: startedMs, firstByteMs: undefined as number | undefined };
    transfer.origin = prefixLength > 0 ? undefined : timing;
    const http = this.deps.http.fetch({
      url: ref.url,
      ...(range ? { range } : {}),
      onData: (chunk) => {
        if (!this.isCurrent(transfer)) return;
        transfer.firstByteMs ??= clock.now();
        timing.firstByteMs ??= clock.now();
        expected.received += chunk.length;
        throughput.receivedBytes += chunk.length;
        transfer.httpBytes += chunk.length;
        stream.stats.httpBytes += chunk.length;
        emit('bytes-down', { streamKey: stream.key, source: 'http', bytes: chunk.length });
      },
    });
    transfer.http = http;
    http.body.then(
      (body) => {
        if (!this.isCurrent(transfer)) return;
        if (expected.received === 0) {
          // A client that does not report chunks: count the body once.
          throughput.receivedBytes += body.length;
          transfer.httpBytes += body.length;
          stream.stats.httpBytes += body.length;
          emit('bytes-down', { streamKey: stream.key, source: 'http', bytes: body.length });
        }
        throughput.sample(body.length, throughput.receivedBytes - linkBytesAtStart, clock.now() - startedMs);
        log(`#${transfer.sequence} HTTP ${body.length} bytes${range ? ' (Range)' : ''}: first byte after ${timing.firstByteMs === undefined ? '-' : timing.firstByteMs - startedMs} ms, all after ${clock.now() - startedMs} ms`, stream.key);
        stream.stats.httpSegments++;
        let bytes = body;
        if (transfer.prefix) {
          bytes = new Uint8Array(transfer.prefix.length + body.length);
          bytes.set(transfer.prefix);
          bytes.set(body, transfer.prefix.length);
        }
        void this.complete(transfer, bytes);
      },
      (error: unknown) => {
        if (!this.isCurrent(transfer)) return;
        this.drop(transfer);
        const failure = error instanceof Error ? error : new ShoalError('HTTP_NETWORK', `${ref.url}: ${String(error)}`);
        log(`#${transfer.sequence} HTTP failed${transfer.seed ? ' (seed)' : ''}: ${failure.message}`, stream.key);
        if (!isShoalError(failure, 'ABORTED')) {
          throughput.failed(clock.now());
          if (transfer.seed) stream.seeding.failed(transfer.sequence, clock.now());
        }
        stream.waiters.settle(transfer.sequence, (waiter) => waiter.reject(failure));
        this.deps.replan();
      },
    );
  }

  /** Bytes complete: verify what came from peers, store, announce, hand copies to the waiting loads. */
  private async complete(transfer: Transfer, bytes: Uint8Array): Promise<void> {
    const { clock, store, verifier, emit } = this.deps;
    const stream = this.stream;
    const sequence = transfer.sequence;
    const ref = stream.refs.get(sequence)!;
    const fromPeer = transfer.p2pPeer;
    if (transfer.p2pBytes > 0 && verifier.enabled) {
      transfer.state = 'verifying';
      transfer.parked = undefined;
      transfer.verifying = bytes;
      const verdict = await verifier.verify(ref, bytes);
      transfer.verifying = undefined;
      if (this.deps.isDestroyed() || this.bySequence.get(sequence) !== transfer) return;
      log(`#${sequence} P2P bytes ${verdict}`, stream.key);
      if (verdict === 'unverifiable' && ++transfer.checks < MAX_INTEGRITY_CHECKS) {
        // A live manifest lags the playlist: keep the bytes until it can be fetched again, rather
        // than drop them and download the same segment again (and again) from a peer.
        transfer.state = 'parked';
        transfer.parked = { bytes, recheckAtMs: Math.max(verifier.nextRefreshMs, clock.now() + 1) };
        this.deps.replan();
        return;
      }
      if (verdict !== 'valid') {
        stream.pool.abandonRelayedUploads(sequence);
        if (verdict === 'invalid' && fromPeer) {
          stream.pool.ban(fromPeer, `segment ${sequence} failed verification`);
          fromPeer.close('sent a segment that failed verification');
        }
        // Whatever the peers' share, the player gets only bytes that pass: start over from the origin.
        if (verdict === 'unverifiable') this.wastedP2P.set(sequence, MAX_WASTED_P2P_TRANSFERS);
        this.bySequence.delete(sequence);
        if (stream.waiters.has(sequence)) this.startHttp(sequence, false);
        else stream.pool.announce(sequence, SegmentState.none);
        this.deps.replan();
        return;
      }
    }
    this.bySequence.delete(sequence);
    this.wastedP2P.delete(sequence);
    if (transfer.p2pBytes > 0 && transfer.httpBytes === 0) stream.stats.p2pSegments++;
    if (ref.durationS > 0) stream.bytesPerS = 0.8 * stream.bytesPerS + 0.2 * (bytes.length / ref.durationS);
    const stored = store.put(ref, bytes);
    log(`#${sequence} complete: ${transfer.p2pBytes} bytes P2P, ${transfer.httpBytes} HTTP`, stream.key);
    stream.pool.announce(sequence, stored ? SegmentState.has : SegmentState.none);
    const source: SegmentSource = transfer.p2pBytes > transfer.httpBytes ? 'p2p' : 'http';
    let first = true;
    stream.waiters.settle(sequence, (waiter) => {
      const now = clock.now();
      const origin = transfer.origin && transfer.p2pBytes === 0 ? { requestMs: transfer.origin.requestMs, firstByteMs: transfer.origin.firstByteMs ?? now } : undefined;
      const timing: LoadTiming = { requestMs: waiter.requestMs, firstByteMs: Math.max(transfer.firstByteMs ?? now, waiter.requestMs), doneMs: now, ...(origin ? { origin } : {}) };
      // The store copied the bytes: the first load may take this buffer, the others get copies.
      const own = first ? bytes : bytes.slice();
      first = false;
      emit('segment-loaded', { ref: waiter.ref, source, bytes: own.length, timing });
      waiter.resolve({ bytes: own, source, timing });
    });
    this.deps.replan();
  }

  /** Failed or no longer wanted: P2P bytes thrown away count against the segment's P2P attempts. */
  private drop(transfer: Transfer): void {
    if (this.bySequence.get(transfer.sequence) !== transfer) return;
    this.bySequence.delete(transfer.sequence);
    if (transfer.state !== 'http' && transfer.p2pBytes > 0) this.wastedP2P.set(transfer.sequence, (this.wastedP2P.get(transfer.sequence) ?? 0) + 1);
    transfer.http?.abort();
    this.stream.pool.announce(transfer.sequence, SegmentState.none);
  }
}
