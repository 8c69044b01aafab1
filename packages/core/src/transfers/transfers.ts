// Transfers: one Transfer per segment this stream is getting, over HTTP or from a peer, until its
// bytes are in the store or its loads rejected (then it leaves the map). States: http | p2p →
// verifying → done; verifying → parked (the manifest does not list the bytes yet) → verifying; or
// failed. A P2P transfer the plan cancels, or whose peer left, continues from its byte offset at
// another peer that has the segment, or over HTTP with a Range request (http-transfer.ts), as the
// plan decides; a transfer nobody needs any more is dropped.
import { runHttp, type HttpRoom } from './http-transfer.js';
import { createLogger } from '../logger.js';
import { SegmentState } from '../wire/peer-protocol.js';
import { MAX_WASTED_P2P_TRANSFERS } from '../plan/scheduler.js';
import type { PeerSession } from '../peers/peer.js';
import type { ResumedPrefix } from '../peers/peer-download.js';
import { sendersOfBadBytes } from './sender-blame.js';
import { Transfer, type TransferDeps, type TransferStream } from './transfer.js';
import type { LoadTiming } from './pending-loads.js';
import type { SegmentSource } from '../types.js';

export { Transfer, type TransferDeps, type TransferState, type TransferStream } from './transfer.js';

const log = createLogger('shoal:core:transfers');

/** Checks of P2P bytes the integrity manifest does not list yet, before they are given up (a live manifest lags its playlist). */
const MAX_INTEGRITY_CHECKS = 3;

/** One stream's transfers, by segment sequence. */
export class Transfers {
  private readonly bySequence = new Map<number, Transfer>();
  /** P2P transfers per segment whose bytes were thrown away; at MAX_WASTED_P2P_TRANSFERS the segment comes over HTTP only. */
  private readonly wastedP2P = new Map<number, number>();

  /** What the HTTP half of a transfer reports back to. */
  private readonly httpRoom: HttpRoom;

  constructor(private readonly stream: TransferStream, private readonly deps: TransferDeps) {
    this.httpRoom = {
      stream, deps,
      isCurrent: (transfer) => this.isCurrent(transfer),
      complete: (transfer, bytes) => void this.complete(transfer, bytes),
      drop: (transfer) => this.drop(transfer),
    };
  }

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

  /** The whole segment from the origin: elected to seed it, for the player, or again after P2P bytes were thrown away. */
  startHttp(sequence: number, kind: 'seed' | 'urgent' | 'refetch'): void {
    const transfer = this.start(sequence, 'http', undefined, kind === 'seed');
    transfer.originKind = kind;
    runHttp(transfer, undefined, this.httpRoom);
  }

  startP2P(sequence: number, peer: PeerSession): void {
    this.start(sequence, 'p2p', peer, false);
    peer.request(sequence);
  }

  /**
   * The plan cancels a P2P transfer, or places one whose peer left: the rest comes from `resumeAt`
   * (a request at the byte offset reached), else over HTTP (a Range request), else it is dropped.
   */
  cancelP2P(sequence: number, resumeOverHttp: boolean, resumeAt?: PeerSession): void {
    const transfer = this.bySequence.get(sequence);
    if (transfer?.state !== 'p2p') return;
    const { prefix, totalBytes } = transfer.peer?.cancelDownload() ?? transfer.orphan!;
    transfer.orphan = undefined;
    const rest = resumeAt ? ` from ${resumeAt.id.slice(0, 8)}` : resumeOverHttp ? ' over HTTP' : '';
    log(`#${sequence} P2P ${transfer.peer ? 'cancelled' : 'orphaned'} after ${prefix.length} bytes${rest && `, the rest${rest}`}`, this.stream.key);
    if (resumeAt && totalBytes !== undefined) this.resumeAtPeer(transfer, resumeAt, { prefix, totalBytes });
    else if (resumeOverHttp) this.resumeOverHttp(transfer, prefix, totalBytes);
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

  /**
   * A peer leaving mid-transfer must not stall the player: keep what arrived, and let the plan,
   * which runs next (the pool replans), say where the rest comes from (cancelP2P). What a banned
   * peer sent is not kept: the whole comes over HTTP.
   */
  onPeerGone(peer: PeerSession, banned: boolean): void {
    const sequence = peer.downloading;
    const transfer = sequence !== undefined ? this.bySequence.get(sequence) : undefined;
    if (!transfer || transfer.peer !== peer) return;
    const { prefix, totalBytes } = peer.cancelDownload();
    if (!this.stream.waiters.has(transfer.sequence)) this.drop(transfer);
    else if (banned || prefix.length === 0 || totalBytes === undefined) this.resumeOverHttp(transfer, new Uint8Array(0), undefined);
    else {
      transfer.peer = undefined;
      transfer.orphan = { prefix, totalBytes };
    }
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

  /** P2P → another peer, asked for the bytes after those received so far. */
  private resumeAtPeer(transfer: Transfer, peer: PeerSession, resumed: ResumedPrefix): void {
    transfer.peer = peer;
    transfer.senders.push({ peer, fromByte: resumed.prefix.length });
    peer.request(transfer.sequence, resumed);
  }

  /** P2P → HTTP: with a prefix and a known size, a Range request for the rest; else the whole segment again. */
  private resumeOverHttp(transfer: Transfer, prefix: Uint8Array, totalBytes: number | undefined): void {
    transfer.state = 'http';
    transfer.peer = undefined;
    if (prefix.length > 0 && totalBytes !== undefined) {
      transfer.prefix = prefix;
      transfer.originKind = 'range';
      runHttp(transfer, totalBytes, this.httpRoom);
    } else {
      // Nothing of a peer's kept: bytes thrown away make it a refetch, none (a peer that never sent) the player's urgent fetch.
      transfer.originKind = transfer.p2pBytes > 0 ? 'refetch' : 'urgent';
      transfer.p2pBytes = 0;
      transfer.senders = [];
      runHttp(transfer, undefined, this.httpRoom);
    }
  }

  /** Bytes complete: verify what came from peers, store, announce, hand copies to the waiting loads. */
  private async complete(transfer: Transfer, bytes: Uint8Array): Promise<void> {
    const { clock, store, verifier, emit } = this.deps;
    const stream = this.stream;
    const sequence = transfer.sequence;
    const ref = stream.refs.get(sequence)!;
    const senders = transfer.senders;
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
        // One sender sent all the bad bytes; from several, the origin's copy will say whose were bad.
        if (verdict === 'invalid' && senders.length === 1) this.ban(senders[0]!.peer, sequence);
        // Whatever the peers' share, the player gets only bytes that pass: start over from the origin.
        if (verdict === 'unverifiable') this.wastedP2P.set(sequence, MAX_WASTED_P2P_TRANSFERS);
        this.bySequence.delete(sequence);
        if (stream.waiters.has(sequence)) {
          this.startHttp(sequence, 'refetch');
          if (verdict === 'invalid' && senders.length > 1) this.bySequence.get(sequence)!.failedMixedCopy = { bytes, senders, endByte: bytes.length - transfer.httpBytes };
        } else stream.pool.announce(sequence, SegmentState.none);
        this.deps.replan();
        return;
      }
    }
    this.bySequence.delete(sequence);
    this.wastedP2P.delete(sequence);
    if (transfer.failedMixedCopy) for (const peer of sendersOfBadBytes(transfer.failedMixedCopy, bytes)) this.ban(peer, sequence);
    if (transfer.p2pBytes > 0 && transfer.httpBytes === 0) stream.stats.p2pSegments++;
    if (ref.durationS > 0) stream.learnBitrate(bytes.length / ref.durationS);
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

  private ban(peer: PeerSession, sequence: number): void {
    this.stream.pool.ban(peer, `segment ${sequence} failed verification`);
    peer.close('sent a segment that failed verification');
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
