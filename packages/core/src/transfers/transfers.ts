// Transfers: a stream's loads and the transfers that satisfy them. A player's load is settled here
// and only here: from the store at once, or when its segment's transfer completes or fails. A
// transfer brings its segment in legs, each a byte range from one peer or from the origin; the
// plan (stream-planner.ts) says where each leg comes from and moves one that falls behind to
// another peer, or to the origin as a Range request of just its bytes. Peers and origin requests
// hand their bytes straight to it (LegSink, OriginLegOwner), which assembles the copy,
// relays what it holds to peers asking for it, and verifies, stores and hands out the whole.
import type { EngineEmit } from '../engine-events.js';
import { ShoalError, isShoalError } from '../errors.js';
import { createLogger } from '../logger.js';
import type { PeerSession } from '../peers/peer.js';
import type { Clock, SegmentRef } from '../types.js';
import { SegmentState } from '../wire/peer-protocol.js';
import { settleCompleted, type CompletionHost } from './completion.js';
import { runOriginLeg, type OriginLegOwner } from './origin-leg.js';
import { P2PWaste } from './p2p-waste.js';
import { PendingLoads, type SegmentLoad, type Waiter } from './pending-loads.js';
import { Transfer, type Leg, type LegFailure, type LegSink, type TransfersContext, type TransferStream } from './transfer.js';

export { Leg, Transfer, type LegSink, type TransferState, type TransfersContext, type TransferStream } from './transfer.js';

const log = createLogger('shoal:core:transfers');

/** One part of a new P2P transfer, as the plan splits the segment over peers. */
export interface PeerPart {
  peer: PeerSession;
  start: number;
  /** Exclusive; Infinity: to the segment's end. */
  end: number;
}

export class Transfers implements LegSink {
  readonly waiters = new PendingLoads();
  private readonly bySequence = new Map<number, Transfer>();
  /** P2P transfers of each segment whose bytes were thrown away: the plan reads them, the playlist's reload forgets them. */
  readonly waste = new P2PWaste();
  /** What an origin leg needs of it (origin-leg.ts). */
  private readonly originOwner: OriginLegOwner;
  /** What completing a copy needs of it (completion.ts). */
  private readonly completionHost: CompletionHost;

  constructor(
    private readonly stream: TransferStream,
    private readonly context: TransfersContext,
  ) {
    this.completionHost = {
      stream, context, waiters: this.waiters,
      isCurrent: (transfer) => this.isCurrent(transfer),
      remove: (transfer) => this.bySequence.delete(transfer.sequence),
      waste: this.waste,
      refetch: (transfer) => {
        this.bySequence.delete(transfer.sequence);
        this.startOrigin(transfer.ref, 'refetch');
        return this.bySequence.get(transfer.sequence)!;
      },
    };
    const { clock, http, throughput, emit, verifier } = context;
    this.originOwner = {
      streamKey: stream.key, clock, http, throughput, emit, verifier, stats: stream.stats,
      sized: (leg, totalBytes) => this.sized(leg, totalBytes),
      arrived: (leg, chunk) => this.arrived(leg, chunk),
      ended: (leg, failure) => this.ended(leg, failure),
    };
  }

  private get clock(): Clock {
    return this.context.clock;
  }

  private get emit(): EngineEmit {
    return this.context.emit;
  }

  // ---- loads ----

  /** The player asks for a segment: from the store at once, else when its transfer completes. */
  load(ref: SegmentRef): SegmentLoad {
    const requestMs = this.clock.now();
    const stored = this.context.store.get(ref.streamKey, ref.sequence);
    if (stored) {
      const timing = { requestMs, firstByteMs: requestMs, doneMs: requestMs };
      this.emit('segment-loaded', { ref, source: 'store', bytes: stored.length, timing });
      return { result: Promise.resolve({ bytes: stored, source: 'store', timing }), abort: () => {} };
    }
    const { waiter, result } = this.waiters.add(ref, requestMs);
    this.context.replan();
    return { result, abort: () => this.abort(waiter) };
  }

  /** The segment is in the store now: every load waiting for it gets it from there. */
  settleFromStore(sequence: number): void {
    this.waiters.settle(sequence, (waiter) => {
      const bytes = this.context.store.get(this.stream.key, sequence)!;
      const now = this.clock.now();
      const timing = { requestMs: waiter.requestMs, firstByteMs: now, doneMs: now };
      this.emit('segment-loaded', { ref: waiter.ref, source: 'store', bytes: bytes.length, timing });
      waiter.resolve({ bytes, source: 'store', timing });
    });
  }

  private abort(waiter: Waiter): void {
    const { removed, last } = this.waiters.remove(waiter);
    if (!removed) return;
    const transfer = this.bySequence.get(waiter.ref.sequence);
    // An origin fetch nobody waits for is waste (unless it seeds the swarm); P2P prefetch may go on.
    if (last && transfer && !transfer.seed && transfer.p2pBytes === 0 && transfer.someLeg((leg) => leg.source.kind === 'origin')) this.drop(transfer);
    waiter.reject(new ShoalError('ABORTED', `load of segment ${waiter.ref.sequence} aborted`));
    this.context.replan();
  }

  // ---- what plans read ----

  /** The running transfers, by sequence. */
  get running(): ReadonlyMap<number, Transfer> {
    return this.bySequence;
  }

  /** Some transfer brings bytes from the origin or from a peer now. */
  anyLegFrom(kind: 'origin' | 'peer'): boolean {
    for (const transfer of this.bySequence.values()) if (transfer.someLeg((leg) => leg.source.kind === kind)) return true;
    return false;
  }

  /** The player waits on a transfer that brings bytes from the origin now (its acknowledgements need the uplink). */
  playerWaitsOnOrigin(): boolean {
    return [...this.bySequence.values()].some((transfer) => this.waiters.has(transfer.sequence) && transfer.someLeg((leg) => leg.source.kind === 'origin'));
  }

  /** Bytes each running leg is still to receive, what they will take of the downlink; `sizeBytes` estimates a segment whose size is not known. */
  downloadsLeftBytes(sizeBytes: (sequence: number) => number): number[] {
    const left: number[] = [];
    for (const transfer of this.bySequence.values()) {
      const total = transfer.totalBytes ?? sizeBytes(transfer.sequence);
      for (const leg of transfer.legs) left.push(Math.max(Math.min(leg.end, total) - leg.next, 0));
    }
    return left;
  }

  // ---- starting and moving legs ----

  /** The whole segment from the origin: elected to seed it, for the player, or again after P2P bytes were thrown away. */
  startOrigin(ref: SegmentRef, kind: 'seed' | 'urgent' | 'refetch'): void {
    const transfer = this.open(ref, kind === 'seed');
    runOriginLeg(transfer.addLeg(0, Infinity, { kind: 'origin', http: undefined, originKind: kind }, this.clock.now()), this.originOwner);
    // An origin fetch is news (live-edge seeding: others wait for it); a request to a peer is not
    // until its first bytes arrive (many are answered busy, and each try would cost every neighbour a message).
    this.stream.pool.announce(ref.sequence, SegmentState.fetching);
  }

  /** The segment from peers, one part from each, each needed within `withinMs`. */
  startPeers(ref: SegmentRef, parts: readonly PeerPart[], withinMs: number): void {
    const transfer = this.open(ref, false);
    for (const { peer, start, end } of parts) this.askPeer(transfer, peer, start, end, withinMs);
  }

  /**
   * A leg falls behind, or its peer left: what it still has to bring comes from `toPeer`, else from
   * the origin as a Range request (or, for a transfer nobody waits for, not at all: `drop`).
   */
  moveLeg(transfer: Transfer, leg: Leg, toPeer: PeerSession | undefined, withinMs: number): void {
    if (leg.ended || !this.isCurrent(transfer)) return;
    this.endLeg(leg);
    log(`#${transfer.sequence} bytes ${leg.next}-${leg.end} to ${toPeer?.id.slice(0, 8) ?? 'the origin'}`, this.stream.key);
    if (leg.next >= leg.end) return this.checkComplete(transfer);
    if (toPeer) return this.askPeer(transfer, toPeer, leg.next, leg.end, withinMs);
    // The origin: the whole segment again if its size is still unknown (nothing to put a range on).
    if (transfer.totalBytes === undefined) return this.restartFromOrigin(transfer);
    runOriginLeg(transfer.addLeg(leg.next, leg.end, { kind: 'origin', http: undefined, originKind: 'range' }, this.clock.now()), this.originOwner);
  }

  /** A transfer nobody needs any more. P2P bytes thrown away count against the segment's P2P attempts. */
  drop(transfer: Transfer): void {
    if (!this.isCurrent(transfer)) return;
    this.end(transfer);
    if (transfer.p2pBytes > 0) this.waste.add(transfer.sequence);
    this.stream.pool.abandonRelayedUploads(transfer.sequence);
    this.stream.pool.announce(transfer.sequence, SegmentState.none);
  }

  destroy(): void {
    for (const transfer of [...this.bySequence.values()]) this.end(transfer);
  }

  private open(ref: SegmentRef, seed: boolean): Transfer {
    const transfer = new Transfer(ref, seed, this.stream.bytesPerS);
    this.bySequence.set(ref.sequence, transfer);
    return transfer;
  }

  private askPeer(transfer: Transfer, peer: PeerSession, start: number, end: number, withinMs: number): void {
    const leg = transfer.addLeg(start, end, { kind: 'peer', peer }, this.clock.now());
    leg.withinMs = withinMs;
    peer.request(leg, withinMs, this);
  }

  /** The whole segment over HTTP, anew: nothing of what peers sent is kept. */
  private restartFromOrigin(transfer: Transfer): void {
    const thrownAway = transfer.p2pBytes > 0;
    this.end(transfer);
    if (thrownAway) this.waste.add(transfer.sequence);
    this.startOrigin(transfer.ref, thrownAway ? 'refetch' : 'urgent');
  }

  /** The transfer is over: no longer running, and every leg of it ended. */
  private end(transfer: Transfer): void {
    this.bySequence.delete(transfer.sequence);
    for (const leg of [...transfer.legs]) this.endLeg(leg);
  }

  /** The leg is over: a peer's download is cancelled, an origin request aborted. */
  private endLeg(leg: Leg): void {
    if (leg.ended) return;
    leg.ended = true;
    leg.transfer.legs.delete(leg);
    if (leg.source.kind === 'peer') leg.source.peer.cancelLeg(leg);
    else leg.source.http?.abort();
  }

  private isCurrent(transfer: Transfer): boolean {
    return this.bySequence.get(transfer.sequence) === transfer && !this.context.isDestroyed();
  }

  // ---- what the legs bring ----

  sized(leg: Leg, totalBytes: number): boolean {
    return (!leg.peer || totalBytes <= leg.transfer.maxBytes) && leg.transfer.setSize(totalBytes);
  }

  arrived(leg: Leg, chunk: Uint8Array): void {
    const transfer = leg.transfer;
    if (leg.ended || !this.isCurrent(transfer)) return;
    transfer.firstByteMs ??= this.clock.now();
    leg.firstByteMs ??= this.clock.now();
    transfer.write(leg, chunk);
    if (leg.peer) {
      this.context.throughput.receivedBytes += chunk.length;
      this.stream.stats.p2pBytes += chunk.length;
      this.emit('bytes-down', { streamKey: this.stream.key, source: 'p2p', bytes: chunk.length });
    }
    this.announceProgress(transfer);
    // Uploads relaying this segment may have new bytes to send.
    this.stream.pool.relayedBytesArrived();
  }

  finished(leg: Leg): void {
    if (leg.ended) return;
    this.endLeg(leg);
    this.checkComplete(leg.transfer);
  }

  ended(leg: Leg, failure: ShoalError | undefined): void {
    if (leg.ended) return;
    const transfer = leg.transfer;
    this.endLeg(leg);
    if (!this.isCurrent(transfer)) return;
    if (!failure) return this.checkComplete(transfer);
    // The origin refused or failed: the loads waiting for the segment fail with its error (the player retries).
    this.end(transfer);
    this.stream.pool.announce(transfer.sequence, SegmentState.none);
    if (transfer.seed && !isShoalError(failure, 'ABORTED')) this.stream.seeding.failed(transfer.sequence, this.clock.now());
    this.waiters.settle(transfer.sequence, (waiter) => waiter.reject(failure));
    this.context.replan();
  }

  failed(leg: Leg, reason: LegFailure): void {
    if (leg.ended || leg.orphaned || !this.isCurrent(leg.transfer)) return;
    // `size`: one of two senders is wrong and we cannot tell which: nothing of theirs is kept.
    if (reason === 'size') return this.restartFromOrigin(leg.transfer);
    // Bytes relayed from a copy that failed: they come again, and what we relayed of them is void.
    if (reason === 'void' && leg.transfer.unwrite(leg)) this.stream.pool.abandonRelayedUploads(leg.transfer.sequence);
    // What arrived stays; the plan, which runs next, moves the rest elsewhere.
    leg.orphaned = true;
    this.context.replan();
  }

  /** A peer left: its legs are orphaned (the plan moves them), or, banned, nothing of its bytes is kept. */
  peerGone(peer: PeerSession, banned: boolean): void {
    for (const transfer of [...this.bySequence.values()]) {
      if (!transfer.someLeg((leg) => leg.peer === peer)) continue;
      if (!banned) {
        for (const leg of transfer.legs) if (leg.peer === peer) this.failed(leg, 'gone');
      } else if (this.waiters.has(transfer.sequence)) this.restartFromOrigin(transfer);
      else this.drop(transfer);
    }
  }

  // ---- the whole copy ----

  /**
   * We relay what we hold of a segment still arriving: peers hear it once its first bytes are in,
   * and again at half (from the two they judge how fast it grows). Each message costs every
   * neighbour's link a packet, so no more.
   */
  private announceProgress(transfer: Transfer): void {
    const total = transfer.totalBytes;
    if (total === undefined || transfer.prefix === 0 || transfer.prefix >= total) return;
    const step = transfer.prefix * 2 >= total ? 2 : 1;
    if (step <= transfer.announcedStep) return;
    transfer.announcedStep = step;
    this.stream.pool.progress(transfer.sequence, transfer.prefix, total);
  }

  private checkComplete(transfer: Transfer): void {
    if (!this.isCurrent(transfer) || !transfer.complete || transfer.state !== 'running') return;
    void settleCompleted(transfer, this.completionHost);
  }

  /** The manifest may list parked bytes now: verify them again. */
  recheckParked(transfer: Transfer): void {
    transfer.state = 'running';
    this.checkComplete(transfer);
  }

  /** Parked P2P bytes the player cannot wait for any longer: the origin's copy replaces them. */
  giveUpParked(transfer: Transfer): void {
    this.stream.pool.abandonRelayedUploads(transfer.sequence);
    this.waste.exhaust(transfer.sequence);
    this.bySequence.delete(transfer.sequence);
    this.startOrigin(transfer.ref, 'refetch');
  }
}
