// The scheduler: pure functions from a snapshot of state to actions. No clock, no I/O: the
// engine builds the snapshot, calls plan(), and carries out what comes back. That is what
// lets the same decisions run in the browser, in vitest and in the swarm simulator.
import { splitAcross, type SplitCandidate } from './split.js';
import { httpBudgetMs, sharedDownlinkBytes, type ModeWindows } from './windows.js';

export * from './windows.js';
export { PREFETCH_STORE_SHARE, firstEndingAfter, prefetchWindow } from './prefetch-window.js';

/** One leg of a transfer under way: a byte range from a peer (or, peerId undefined, the origin). */
export interface LegPlan {
  id: number;
  peerId: string | undefined;
  start: number;
  /** Exclusive; Infinity while the segment's size is not known. */
  end: number;
  /** Bytes received from `start` on. */
  received: number;
  startedMs: number;
  /** When its first byte arrived (undefined: none yet). */
  firstByteMs?: number | undefined;
  /** Within how long of its start its peer took it to bring its bytes, ms (default: no promise). */
  withinMs?: number;
  /** Its peer left or refused: the rest must come from elsewhere now. */
  orphaned: boolean;
}

export interface SegmentPlan {
  sequence: number;
  /** Known size, or the engine's estimate. */
  sizeBytes: number;
  /** The size is known (a sender or the playlist said it), not estimated. */
  sizeKnown?: boolean;
  deadlineMs: number;
  /** The player is waiting for it (loadSegment pending). */
  requested: boolean;
  /** A whole-segment origin request runs for it (nothing of it to plan). */
  httpInFlight: boolean;
  /** The legs of its transfer under way (none: no transfer, or only origin legs). */
  legs?: readonly LegPlan[];
  /** Live-edge seeding: this peer is an elected origin fetcher from this time on. */
  seedAtMs: number | undefined;
  /** A connected peer announced it is fetching this segment: it should be available soon. */
  comingFromPeer: boolean;
  /** Live-edge seeding: another peer already fetches or has it; an elected fetch would be a duplicate. */
  seedSatisfied: boolean;
  /** P2P transfers of it whose bytes were thrown away (cancelled, failed, unverifiable): at MAX_WASTED_P2P_TRANSFERS it comes over HTTP only. */
  wastedP2PTransfers: number;
}

/** A segment whose P2P bytes were thrown away this often is not asked of peers again (each try cost a peer's uplink for nothing). */
export const MAX_WASTED_P2P_TRANSFERS = 2;

/**
 * A new P2P leg is planned at this share of the rate its peer advertises (what its link delivered
 * lately): rates vary, and a leg that misses its deadline costs both uplinks for bytes the HTTP
 * fallback fetches again (simulator, critical, 100 viewers: 60% of accepted uploads were cancelled
 * by their requesters when the advertised rate was the pace's probe). Not where a whole HTTP
 * download must still fit after it (low mode, moves): that fallback is the slack (live-low, 6
 * viewers: 17% offload without a second slack, 5% with it).
 */
export const P2P_RATE_SLACK = 0.85;

/** Peers a new transfer is split over at most. */
const MAX_SENDERS = 4;

/**
 * A leg's first byte is trusted to come within this of its request (a round trip and the
 * sender's queue): a leg is started only where that leaves it before HTTP must start, as a leg
 * without a byte is moved to the origin then (simulator, 200 viewers joining: legs started 100 ms
 * before it went to the origin 100 ms later, each having cost its sender an upload).
 */
const FIRST_BYTE_ALLOWANCE_MS = 500;

export interface PeerPlan {
  id: string;
  /** The segments of this plan the peer may be asked for (it has them or relays them, and did not fail us on them lately). */
  offers: ReadonlySet<number>;
  /** Rate a new request to this peer is expected to get: what its link delivers, else measured (or assumed). */
  throughputBytesPerS: number;
  /** How long a new request would wait behind the peer's other uploads, ms (default 0). */
  waitMs?: number;
  /** Bringing us a leg already (a peer brings one range at a time), or said busy recently. */
  busy: boolean;
  /** Segments it relays as they arrive: the bytes it holds from the start, and the rate they grow at. */
  relays?: ReadonlyMap<number, { heldBytes: number; growthBytesPerS: number | undefined }>;
}

export interface SchedulerInput {
  nowMs: number;
  isLive: boolean;
  /** Candidates, in any order; already-stored segments are left out by the engine. */
  segments: SegmentPlan[];
  peers: PeerPlan[];
  /** The downlink's rate, as origin transfers measure it (all of it, not one transfer's share). */
  httpThroughputBytesPerS: number;
  /** Bytes each download under way on this viewer's downlink (every stream's) is still to receive (default: none). */
  downlinkLeftBytes?: readonly number[];
  windows: ModeWindows;
  p2pDownload: boolean;
  /** P2P legs under way at most. */
  maxP2PDownloads: number;
  /**
   * In [0, 1) for a peer and a segment, different on each requester (a hash of both and its own
   * id): peers about as fast are asked in a different order by each requester, not all the same
   * one (default: none, the fastest first).
   */
  spread?: (peerId: string, sequence: number) => number;
}

export type SchedulerAction =
  | { type: 'http'; sequence: number; reason: 'urgent' | 'no-peer' | 'seed' }
  /** A transfer from peers: each part from one, all needed within `withinMs`. */
  | { type: 'p2p'; sequence: number; parts: { peerId: string; start: number; end: number }[]; withinMs: number }
  /** A leg's rest from `toPeerId` (needed within `withinMs`), else from the origin as a Range request. */
  | { type: 'move'; sequence: number; legId: number; toPeerId: string | undefined; withinMs: number }
  /** A transfer nobody waits for that cannot go on from peers: dropped. */
  | { type: 'drop'; sequence: number }
  /** Nothing to do before this time unless state changes: plan again then. */
  | { type: 'wake'; atMs: number };

/**
 * Projected finish of a P2P leg. Before its first byte: the peer took the request on its promise
 * to finish within `withinMs` (it may serve earlier deadlines first), so it is on time while its
 * first byte may still come and the bytes follow at the peer's rate. From its first byte on, its
 * own rate counts after a short warm-up: a stalled peer's rate falls with every tick without data,
 * so its projection slips past the deadline and the leg moves elsewhere.
 */
function projectLegFinishMs(nowMs: number, leg: LegPlan, remainingBytes: number, peerBytesPerS: number): number {
  const atPeerRateMs = (remainingBytes / Math.max(peerBytesPerS, 1)) * 1000;
  if (leg.firstByteMs === undefined) return Math.max(nowMs + atPeerRateMs, leg.startedMs + (leg.withinMs ?? 0));
  const elapsedMs = nowMs - leg.firstByteMs;
  const rate = elapsedMs >= 250 ? (leg.received / elapsedMs) * 1000 : peerBytesPerS;
  return nowMs + (remainingBytes / Math.max(rate, 1)) * 1000;
}

export function plan(input: SchedulerInput): SchedulerAction[] {
  return new Planner(input).run();
}

/** One plan: the segments in order of need, each given a source, and legs that fall behind moved. */
class Planner {
  private readonly actions: SchedulerAction[] = [];
  private wakeAtMs = Infinity;
  /** Peers bringing us a leg now, or given one by this plan. */
  private readonly busyPeers = new Set<string>();
  private legsInFlight = 0;
  private readonly peerById: Map<string, PeerPlan>;

  constructor(private readonly input: SchedulerInput) {
    this.peerById = new Map(input.peers.map((peer) => [peer.id, peer]));
    for (const segment of input.segments) {
      for (const leg of segment.legs ?? []) {
        if (leg.peerId === undefined || leg.orphaned) continue;
        this.busyPeers.add(leg.peerId);
        this.legsInFlight++;
      }
    }
  }

  run(): SchedulerAction[] {
    // What the player waits for comes first, so prefetch never takes the peers a requested segment needs.
    const ordered = [...this.input.segments].sort(
      (a, b) => Number(b.requested) - Number(a.requested) || a.deadlineMs - b.deadlineMs || a.sequence - b.sequence,
    );
    for (const segment of ordered) {
      if (segment.httpInFlight) continue;
      if (segment.legs?.length) this.planLegs(segment);
      else this.planStart(segment);
    }
    if (this.wakeAtMs < Infinity) this.actions.push({ type: 'wake', atMs: this.wakeAtMs });
    return this.actions;
  }

  private wake(atMs: number): void {
    if (atMs > this.input.nowMs && atMs < this.wakeAtMs) this.wakeAtMs = atMs;
  }

  /** HTTP's budget for `bytes`, on a downlink shared with the downloads under way. */
  private httpNeedFor(bytes: number, ownLeftBytes = 0): number {
    const { input } = this;
    return httpBudgetMs(sharedDownlinkBytes(bytes, input.downlinkLeftBytes ?? [], ownLeftBytes), input.httpThroughputBytesPerS, input.windows);
  }

  /** The idle peers offering the segment, but those already bringing us one of its legs. */
  private idleHolders(sequence: number, exclude: ReadonlySet<string> = new Set()): PeerPlan[] {
    return this.input.peers.filter((peer) => peer.offers.has(sequence) && !peer.busy && !this.busyPeers.has(peer.id) && !exclude.has(peer.id));
  }

  /**
   * The player waits for an origin download: a seed fetch now would take half of its downlink
   * (browser swarm, 300 kbit/s uplinks: a Range resume took 2.1 s beside one, and the player
   * stalled). The seed starts once that one is in (its completion plans again).
   */
  private playerOnOrigin(): boolean {
    return (
      this.input.segments.some((segment) => segment.requested && segment.httpInFlight) ||
      this.actions.some((action) => (action.type === 'http' && action.reason !== 'seed') || (action.type === 'move' && action.toPeerId === undefined))
    );
  }

  /** A segment without a transfer: the origin, peers, or waiting for peers until HTTP must start. */
  private planStart(segment: SegmentPlan): void {
    const { input, actions } = this;
    const { windows } = input;
    const timeLeftMs = segment.deadlineMs - input.nowMs;
    const httpNeedMs = this.httpNeedFor(segment.sizeBytes);
    if (timeLeftMs <= httpNeedMs) {
      if (segment.requested) actions.push({ type: 'http', sequence: segment.sequence, reason: 'urgent' });
      return;
    }
    // An elected origin fetcher, unless someone else already fetches or has the segment.
    if (segment.seedAtMs !== undefined && !segment.seedSatisfied) {
      if (segment.seedAtMs > input.nowMs) this.wake(segment.seedAtMs);
      else if (!this.playerOnOrigin()) actions.push({ type: 'http', sequence: segment.sequence, reason: 'seed' });
      return;
    }
    const p2pAllowed = input.p2pDownload && segment.wastedP2PTransfers < MAX_WASTED_P2P_TRANSFERS;
    const holders = p2pAllowed ? this.idleHolders(segment.sequence) : [];
    if (holders.length > 0 && this.startFromPeers(segment, holders, timeLeftMs, httpNeedMs)) return;
    const anyHolder = p2pAllowed && input.peers.some((peer) => peer.offers.has(segment.sequence));
    if (anyHolder) {
      if (segment.requested && windows.p2pMustLeaveHttpFallback) actions.push({ type: 'http', sequence: segment.sequence, reason: 'no-peer' });
      // A holder exists but is busy: wait for it until HTTP must start.
      else this.waitOrFetch(segment, timeLeftMs, httpNeedMs);
      return;
    }
    if (!segment.requested) return;
    // Worth waiting only if some peer is expected to get it: one is fetching it, or (live)
    // elected peers will fetch each new segment from the origin.
    const expectFromPeers = input.p2pDownload && windows.waitForPeers && input.peers.length > 0 && (segment.comingFromPeer || input.isLive);
    if (expectFromPeers) this.waitOrFetch(segment, timeLeftMs, httpNeedMs);
    else actions.push({ type: 'http', sequence: segment.sequence, reason: 'no-peer' });
  }

  /** Waiting for peers ends where HTTP must start, earlier while the origin is in trouble. */
  private waitOrFetch(segment: SegmentPlan, timeLeftMs: number, httpNeedMs: number): void {
    const waitUntilLeftMs = httpNeedMs + (this.input.windows.originTroubleMs ?? 0);
    if (segment.requested && timeLeftMs <= waitUntilLeftMs) this.actions.push({ type: 'http', sequence: segment.sequence, reason: 'no-peer' });
    else this.wake(segment.deadlineMs - waitUntilLeftMs);
  }

  /**
   * The segment from up to MAX_SENDERS of its idle holders at once, each a byte range sized to its
   * rate, if they bring it before the deadline less the margin (low mode: with a whole HTTP
   * download still fitting after them). Returns whether it started.
   */
  private startFromPeers(segment: SegmentPlan, holders: PeerPlan[], timeLeftMs: number, httpNeedMs: number): boolean {
    const { windows, maxP2PDownloads } = this.input;
    const slots = maxP2PDownloads - this.legsInFlight;
    const beforeHttpMs = timeLeftMs - httpNeedMs - FIRST_BYTE_ALLOWANCE_MS;
    if (slots <= 0 || beforeHttpMs <= 0) return false;
    const availableMs = windows.p2pMustLeaveHttpFallback ? timeLeftMs - httpNeedMs : timeLeftMs - windows.httpSafetyMarginMs;
    const slack = windows.p2pMustLeaveHttpFallback ? 1 : P2P_RATE_SLACK;
    const candidates: SplitCandidate[] = holders.filter((peer) => (peer.waitMs ?? 0) < beforeHttpMs).map((peer) => {
      const relay = peer.relays?.get(segment.sequence);
      const bytesPerS = peer.throughputBytesPerS * slack;
      return {
        id: peer.id, bytesPerS, waitMs: peer.waitMs ?? 0, spread: this.input.spread?.(peer.id, segment.sequence) ?? 0,
        ...(relay ? { relay: { heldBytes: relay.heldBytes, growthBytesPerS: relay.growthBytesPerS ?? bytesPerS } } : {}),
      };
    });
    const parts = splitAcross(candidates, segment.sizeBytes, availableMs, Math.min(MAX_SENDERS, slots), segment.sizeKnown ?? false);
    if (!parts) return false;
    this.actions.push({ type: 'p2p', sequence: segment.sequence, parts: parts.map(({ id, start, end }) => ({ peerId: id, start, end })), withinMs: availableMs });
    for (const part of parts) this.busyPeers.add(part.id);
    this.legsInFlight += parts.length;
    return true;
  }

  /**
   * A transfer under way: each P2P leg that will not be in before the deadline less the margin,
   * or whose peer left or refused, moves to another holder that brings its rest in time with the
   * HTTP remainder still fitting after it, else to the origin once HTTP must start (at once for an
   * orphaned leg that no other peer offers). A transfer nobody waits for that cannot go on from
   * peers is dropped.
   */
  private planLegs(segment: SegmentPlan): void {
    const { input, actions } = this;
    const timeLeftMs = segment.deadlineMs - input.nowMs;
    const wanted = segment.requested || segment.seedAtMs !== undefined;
    const senders = new Set(segment.legs!.flatMap((leg) => (leg.peerId === undefined ? [] : [leg.peerId])));
    for (const leg of segment.legs!) {
      if (leg.peerId === undefined) continue;
      const remaining = Math.max(0, Math.min(leg.end, segment.sizeBytes) - (leg.start + leg.received));
      if (remaining === 0 && !leg.orphaned) continue;
      const httpRemainderMs = this.httpNeedFor(remaining, remaining);
      // A leg not started yet is trusted on its peer's promise only until HTTP must start for it.
      const promiseOnly = leg.firstByteMs === undefined && timeLeftMs <= httpRemainderMs;
      if (!leg.orphaned && !promiseOnly) {
        const peerRate = this.peerById.get(leg.peerId)?.throughputBytesPerS ?? 1;
        if (projectLegFinishMs(input.nowMs, leg, remaining, peerRate) <= segment.deadlineMs - input.windows.httpSafetyMarginMs) {
          this.wake(segment.deadlineMs - httpRemainderMs);
          continue;
        }
      }
      const next = this.moveTarget(segment, remaining, timeLeftMs, httpRemainderMs, senders);
      // An orphaned leg waits for a holder of the whole segment that is busy now (bringing another
      // leg, say) while HTTP would still be in time after it; with none left, its rest comes from
      // the origin now. Not for a relay: its copy may be the one we are bringing.
      const holderLater = this.input.peers.some((peer) => peer.id !== leg.peerId && peer.offers.has(segment.sequence) && !peer.relays?.has(segment.sequence));
      if (next) {
        actions.push({ type: 'move', sequence: segment.sequence, legId: leg.id, toPeerId: next.id, withinMs: timeLeftMs - httpRemainderMs });
        this.busyPeers.add(next.id);
        senders.add(next.id);
        if (leg.orphaned) this.legsInFlight++;
        else this.busyPeers.delete(leg.peerId);
      } else if ((leg.orphaned && !holderLater) || promiseOnly || timeLeftMs <= httpRemainderMs) {
        if (!wanted) {
          actions.push({ type: 'drop', sequence: segment.sequence });
          return;
        }
        actions.push({ type: 'move', sequence: segment.sequence, legId: leg.id, toPeerId: undefined, withinMs: 0 });
        if (!leg.orphaned) {
          this.busyPeers.delete(leg.peerId);
          this.legsInFlight--;
        }
      } else this.wake(segment.deadlineMs - httpRemainderMs);
    }
  }

  /** The idle holder (not one of the transfer's senders) expected to bring `bytes` soonest, if with HTTP still fitting after it. */
  private moveTarget(segment: SegmentPlan, bytes: number, timeLeftMs: number, httpNeedMs: number, senders: ReadonlySet<string>): PeerPlan | undefined {
    const { input } = this;
    if (!input.p2pDownload || segment.wastedP2PTransfers >= MAX_WASTED_P2P_TRANSFERS || this.legsInFlight >= input.maxP2PDownloads) return undefined;
    // Only holders of the whole segment: a relay's copy may not reach this leg's bytes in time.
    const holders = this.idleHolders(segment.sequence, senders).filter((peer) => !peer.relays?.has(segment.sequence));
    const timeMs = (peer: PeerPlan) => (peer.waitMs ?? 0) + (bytes / Math.max(peer.throughputBytesPerS, 1)) * 1000;
    const rank = (peer: PeerPlan) => timeMs(peer) * (1 + (input.spread?.(peer.id, segment.sequence) ?? 0) / 2);
    const inTime = holders.filter((peer) => timeMs(peer) + httpNeedMs < timeLeftMs);
    return inTime.reduce<PeerPlan | undefined>((best, peer) => (!best || rank(peer) < rank(best) ? peer : best), undefined);
  }
}
