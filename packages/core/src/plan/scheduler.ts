// The scheduler: pure functions from a snapshot of state to actions. No clock, no I/O: the
// engine builds the snapshot, calls plan(), and carries out what comes back. That is what
// lets the same decisions run in the browser, in vitest and in the swarm simulator.
import type { LatencyMode, PlaybackState, SegmentRef } from '../types.js';

/** The latency mode in effect once `auto` is resolved. */
export type EffectiveLatencyMode = 'low' | 'normal' | 'high';

export interface ModeWindows {
  mode: EffectiveLatencyMode;
  /** Multiplies the expected HTTP download time when deciding whether HTTP must start now. */
  httpSafetyFactor: number;
  /** Added to every HTTP time budget (request latency, jitter), ms. */
  httpSafetyMarginMs: number;
  /** Segments this far ahead of the playhead (seconds of media) may be prefetched over P2P before the player asks. */
  prefetchAheadS: number;
  /**
   * A requested segment that no peer has yet: wait for peers (until HTTP must start) rather than
   * go to HTTP at once. Off in low mode, where P2P is used only where it cannot hurt.
   */
  waitForPeers: boolean;
  /** Low mode: start P2P only if a full HTTP download still fits after the P2P attempt. */
  p2pMustLeaveHttpFallback: boolean;
  /**
   * Extra time, ms, a requested segment stops waiting for peers before HTTP must start: the origin
   * failed lately (OriginThroughput), and the fallback may need a retry. Waiting only: in-flight
   * and new P2P transfers keep the plain budget. Default 0.
   */
  originTroubleMs?: number;
  /**
   * Queueing delay on the viewer's own uplink now, ms (UploadGovernor.queueDelayNowMs): each round
   * trip of an HTTP request waits behind it (the request, then the acknowledgements TCP's window
   * grows on), so every HTTP budget adds it once per round trip. Default 0.
   */
  uplinkQueueMs?: number;
}

export interface WindowSettings {
  httpSafetyFactor: number;
  httpSafetyMarginMs: number;
  p2pWindowS: number;
}

/**
 * Resolves `auto`: VOD gets `high`; live reads how far behind the edge the player sits (the
 * player's own target, or the measured distance when larger), in segments: under 3 is `low`,
 * under 8 `normal`, else `high`. Never changes the player's settings, only reads them.
 */
export function resolveLatencyMode(mode: LatencyMode, playback: PlaybackState | undefined, segmentDurationS: number): EffectiveLatencyMode {
  if (mode !== 'auto') return mode;
  if (!playback || !playback.isLive) return 'high';
  const measured = playback.liveEdgeS !== undefined ? playback.liveEdgeS - playback.positionS : undefined;
  const budgetS = Math.max(playback.targetLatencyS ?? 0, measured ?? 0);
  if (budgetS <= 0) return 'normal';
  const behindSegments = budgetS / Math.max(segmentDurationS, 0.1);
  return behindSegments < 3 ? 'low' : behindSegments < 8 ? 'normal' : 'high';
}

export function windowsFor(mode: EffectiveLatencyMode, settings: WindowSettings): ModeWindows {
  const base = { mode, httpSafetyMarginMs: settings.httpSafetyMarginMs };
  switch (mode) {
    case 'low':
      return { ...base, httpSafetyFactor: settings.httpSafetyFactor * 1.5, prefetchAheadS: 0, waitForPeers: false, p2pMustLeaveHttpFallback: true };
    case 'normal':
      return { ...base, httpSafetyFactor: settings.httpSafetyFactor, prefetchAheadS: settings.p2pWindowS / 2, waitForPeers: true, p2pMustLeaveHttpFallback: false };
    case 'high':
      return { ...base, httpSafetyFactor: settings.httpSafetyFactor, prefetchAheadS: settings.p2pWindowS, waitForPeers: true, p2pMustLeaveHttpFallback: false };
  }
}

/**
 * When the player will need media that starts at `startS`, on the engine's clock. Playback
 * reported at `reportedAtMs` is extrapolated at its rate; a paused player is budgeted as if it
 * resumed now at normal speed, so a resume never stalls.
 */
export function segmentDeadlineMs(nowMs: number, playback: PlaybackState | undefined, startS: number, reportedAtMs = nowMs): number {
  if (!playback) return nowMs;
  const aheadS = startS - playback.positionS;
  const deadlineMs = playback.rate > 0 ? reportedAtMs + (aheadS / playback.rate) * 1000 : nowMs + aheadS * 1000;
  return Math.max(deadlineMs, nowMs);
}

export interface InFlightP2P {
  peerId: string;
  /** The peer left: what it sent is kept, and the rest must come from elsewhere now. */
  peerGone?: boolean;
  /** Where this peer's bytes start (a resume: the bytes before came from another peer), default 0. */
  startBytes?: number;
  /** Counted from offset 0. */
  receivedBytes: number;
  /** Known from the first chunk. */
  totalBytes: number | undefined;
  startedMs: number;
}

export interface SegmentPlan {
  sequence: number;
  /** Known size, or the engine's estimate. */
  sizeBytes: number;
  deadlineMs: number;
  /** The player is waiting for it (loadSegment pending). */
  requested: boolean;
  httpInFlight: boolean;
  p2p: InFlightP2P | undefined;
  /** Live-edge seeding: this peer is an elected origin fetcher from this time on. */
  seedAtMs: number | undefined;
  /** A connected peer announced it is fetching this segment: it should be available soon. */
  comingFromPeer: boolean;
  /** Live-edge seeding: another peer already fetches or has it; an elected fetch would be a duplicate. */
  seedSatisfied: boolean;
  /** P2P transfers of it whose bytes were thrown away (cancelled, failed, unverifiable): at MAX_WASTED_P2P_TRANSFERS it comes over HTTP only. */
  wastedP2PTransfers: number;
  /**
   * Peers an in-flight P2P transfer may continue at, from its byte offset, when its peer leaves or
   * is too slow: they have the whole segment (a relay's copy may still fail) and were not asked
   * for this transfer before (so it never goes back and forth between two peers). Default none.
   */
  resumableAt?: ReadonlySet<string>;
}

/**
 * A new P2P transfer is planned at this share of the rate its peer advertises (what its link
 * delivered lately): rates vary, and a transfer that misses its deadline costs both uplinks for
 * bytes the HTTP fallback fetches again (simulator, critical, 100 viewers: 60% of accepted uploads
 * were cancelled by their requesters when the advertised rate was the pace's probe). Not where a
 * whole HTTP download must still fit after it (low mode, resumes): that fallback is the slack
 * (live-low, 6 viewers: 17% offload without a second slack, 5% with it).
 */
export const P2P_RATE_SLACK = 0.85;

/** A segment whose P2P bytes were thrown away this often is not asked of peers again (each try cost a peer's uplink for nothing). */
export const MAX_WASTED_P2P_TRANSFERS = 2;

export interface PeerPlan {
  id: string;
  /** The segments of this plan the peer may be asked for (it has them, and did not fail us on them lately). */
  offers: ReadonlySet<number>;
  /** Rate a new request to this peer is expected to get: what it says it paces at, else measured (or assumed). */
  throughputBytesPerS: number;
  /** How long a new request would wait behind the peer's other uploads, ms (default 0). */
  waitMs?: number;
  /** Already serving us a segment, or said busy recently. */
  busy: boolean;
}

export interface SchedulerInput {
  nowMs: number;
  isLive: boolean;
  /** Candidates, in any order; already-stored segments are left out by the engine. */
  segments: SegmentPlan[];
  peers: PeerPlan[];
  /** The downlink's rate, as origin transfers measure it (all of it, not one transfer's share). */
  httpThroughputBytesPerS: number;
  /**
   * Bytes each download under way on this viewer's downlink (every stream's, over HTTP or from a
   * peer) is still to receive. A new HTTP transfer shares the link with them: the plan budgets it
   * with their bytes as well as its own (default: none).
   */
  downlinkLeftBytes?: readonly number[];
  windows: ModeWindows;
  p2pDownload: boolean;
  maxP2PDownloads: number;
}

export type SchedulerAction =
  | { type: 'http'; sequence: number; reason: 'urgent' | 'no-peer' | 'seed' }
  | { type: 'p2p'; sequence: number; peerId: string }
  /**
   * Cancel a P2P transfer; with resumeAtPeer, ask that peer for its remaining bytes (from the byte
   * offset reached), else with resumeOverHttp fetch them with an HTTP Range request.
   */
  | { type: 'cancel-p2p'; sequence: number; resumeOverHttp: boolean; resumeAtPeer?: string }
  /** Nothing to do before this time unless state changes: plan again then. */
  | { type: 'wake'; atMs: number };

/** TCP's first flight after idle, bytes (10 segments of 1460, RFC 6928): each round trip after it carries about twice the one before. */
export const TCP_INITIAL_WINDOW_BYTES = 10 * 1460;

/** Round trips an HTTP request for `bytes` takes on a connection idle since its last: the request's, then slow start's. */
export function httpRoundTrips(bytes: number): number {
  return 1 + Math.log2(1 + Math.max(bytes, 0) / TCP_INITIAL_WINDOW_BYTES);
}

/**
 * How long HTTP needs for `bytes`, with the mode's safety factor and margin, and each round trip's
 * wait behind the viewer's own uplink queue (a 55 kB Range request took 1.8 s behind 0.6 s of
 * queue on a 125 kbit/s uplink in the browser swarm, 0.3 s with none).
 */
export function httpBudgetMs(bytes: number, httpThroughputBytesPerS: number, windows: ModeWindows): number {
  const transferMs = (bytes / Math.max(httpThroughputBytesPerS, 1)) * 1000 * windows.httpSafetyFactor + windows.httpSafetyMarginMs;
  return transferMs + (windows.uplinkQueueMs ?? 0) * httpRoundTrips(bytes);
}

/**
 * Bytes the downlink carries until `bytes` of a new transfer have arrived, the link shared evenly
 * by every download: its own, and of each other download's `leftBytes` as many as its own (one
 * that needs fewer finishes first). `ownLeftBytes`: the new transfer replaces a download listed in
 * `leftBytes` (a P2P transfer moved to HTTP), whose bytes are not counted twice.
 */
export function sharedDownlinkBytes(bytes: number, leftBytes: readonly number[], ownLeftBytes = 0): number {
  let others = -Math.min(ownLeftBytes, bytes);
  for (const left of leftBytes) others += Math.min(left, bytes);
  return bytes + Math.max(others, 0);
}

/** Projected finish of an in-flight P2P transfer from its own progress (or the peer's rate before any byte). */
export function projectP2PFinishMs(nowMs: number, transfer: InFlightP2P, sizeBytes: number, peerThroughputBytesPerS: number): number {
  const total = transfer.totalBytes ?? sizeBytes;
  const remaining = Math.max(total - transfer.receivedBytes, 0);
  const elapsedMs = nowMs - transfer.startedMs;
  // After a short warm-up the transfer's own rate counts: a stalled peer's rate falls with every
  // tick without data, so its projection slips past the deadline and the transfer is cancelled.
  const rate = elapsedMs >= 250 ? ((transfer.receivedBytes - (transfer.startBytes ?? 0)) / elapsedMs) * 1000 : peerThroughputBytesPerS;
  return nowMs + (remaining / Math.max(rate, 1)) * 1000;
}

export function plan(input: SchedulerInput): SchedulerAction[] {
  const { nowMs, windows } = input;
  const downlinkLeft = input.downlinkLeftBytes ?? [];
  /** HTTP's budget for `bytes`, on a downlink shared with the downloads under way. */
  const httpNeedFor = (bytes: number, ownLeftBytes = 0) =>
    httpBudgetMs(sharedDownlinkBytes(bytes, downlinkLeft, ownLeftBytes), input.httpThroughputBytesPerS, windows);
  const actions: SchedulerAction[] = [];
  let wakeAtMs = Infinity;
  const wake = (atMs: number) => {
    if (atMs > nowMs && atMs < wakeAtMs) wakeAtMs = atMs;
  };
  // Waiting for peers ends where HTTP must start, earlier while the origin is in trouble.
  const waitOrFetch = (segment: SegmentPlan, timeLeftMs: number, httpNeedMs: number) => {
    const waitUntilLeftMs = httpNeedMs + (windows.originTroubleMs ?? 0);
    if (segment.requested && timeLeftMs <= waitUntilLeftMs) actions.push({ type: 'http', sequence: segment.sequence, reason: 'no-peer' });
    else wake(segment.deadlineMs - waitUntilLeftMs);
  };
  // The player waits for an origin download: a seed fetch now would take half of its downlink
  // (browser swarm, 300 kbit/s uplinks: a Range resume took 2.1 s beside one, and the player
  // stalled). The seed starts once that one is in (its completion plans again).
  const playerOnOrigin = () =>
    input.segments.some((segment) => segment.requested && segment.httpInFlight) ||
    actions.some((action) => (action.type === 'http' && action.reason !== 'seed') || (action.type === 'cancel-p2p' && action.resumeOverHttp));
  const busyPeers = new Set<string>();
  let p2pInFlight = 0;
  for (const segment of input.segments) {
    if (segment.p2p) {
      busyPeers.add(segment.p2p.peerId);
      p2pInFlight++;
    }
  }
  const peerById = new Map(input.peers.map((peer) => [peer.id, peer]));
  /**
   * The idle peer among `candidates` expected to deliver `bytes` soonest, if that is in time (low
   * mode, or `leaveHttpFallback`: with `httpNeedMs` of HTTP still fitting after it). Starts and resumes choose alike.
   */
  const fastestInTime = (candidates: PeerPlan[], bytes: number, timeLeftMs: number, httpNeedMs: number, leaveHttpFallback = false): PeerPlan | undefined => {
    if (p2pInFlight >= input.maxP2PDownloads) return undefined;
    // Where a whole HTTP download must still fit after the transfer, that is the slack; else the rate's.
    const fallback = windows.p2pMustLeaveHttpFallback || leaveHttpFallback;
    const slack = fallback ? 1 : P2P_RATE_SLACK;
    const p2pTimeMs = (peer: PeerPlan) => (peer.waitMs ?? 0) + (bytes / Math.max(peer.throughputBytesPerS * slack, 1)) * 1000;
    const idle = candidates.filter((peer) => !peer.busy && !busyPeers.has(peer.id));
    const fastest = idle.reduce<PeerPlan | undefined>((best, peer) => (!best || p2pTimeMs(peer) < p2pTimeMs(best) ? peer : best), undefined);
    if (!fastest) return undefined;
    const finishMs = p2pTimeMs(fastest);
    return (fallback ? finishMs + httpNeedMs < timeLeftMs : finishMs <= timeLeftMs - windows.httpSafetyMarginMs) ? fastest : undefined;
  };
  // What the player waits for comes first, so prefetch never takes the peer a requested segment needs.
  const ordered = [...input.segments].sort(
    (a, b) => Number(b.requested) - Number(a.requested) || a.deadlineMs - b.deadlineMs || a.sequence - b.sequence,
  );

  for (const segment of ordered) {
    if (segment.httpInFlight) continue;
    const timeLeftMs = segment.deadlineMs - nowMs;
    const wanted = segment.requested || segment.seedAtMs !== undefined;

    if (segment.p2p) {
      const transfer = segment.p2p;
      const total = transfer.totalBytes ?? segment.sizeBytes;
      const remaining = Math.max(total - transfer.receivedBytes, 0);
      const peerRate = peerById.get(transfer.peerId)?.throughputBytesPerS ?? 1;
      const finishMs = transfer.peerGone ? Infinity : projectP2PFinishMs(nowMs, transfer, segment.sizeBytes, peerRate);
      const httpRemainderMs = httpNeedFor(remaining, remaining);
      if (finishMs <= segment.deadlineMs - windows.httpSafetyMarginMs) {
        wake(segment.deadlineMs - httpRemainderMs);
        continue;
      }
      // Gone, or too slow: the rest from another holder at the byte offset reached, if one brings it
      // with the HTTP remainder still in time after it (its stalling too must not cost the deadline);
      // else over HTTP once HTTP must start (a gone peer's at once).
      p2pInFlight--;
      const resumable = wanted && input.p2pDownload && transfer.totalBytes !== undefined ? input.peers.filter((peer) => segment.resumableAt?.has(peer.id)) : [];
      const next = fastestInTime(resumable, remaining, timeLeftMs, httpRemainderMs, true);
      if (next) {
        actions.push({ type: 'cancel-p2p', sequence: segment.sequence, resumeOverHttp: false, resumeAtPeer: next.id });
        busyPeers.delete(transfer.peerId);
        busyPeers.add(next.id);
        p2pInFlight++;
      } else if (transfer.peerGone || timeLeftMs <= httpRemainderMs) {
        actions.push({ type: 'cancel-p2p', sequence: segment.sequence, resumeOverHttp: wanted });
        busyPeers.delete(transfer.peerId);
      } else {
        p2pInFlight++;
        wake(segment.deadlineMs - httpRemainderMs);
      }
      continue;
    }

    const httpNeedMs = httpNeedFor(segment.sizeBytes);
    const urgent = timeLeftMs <= httpNeedMs;
    if (urgent) {
      if (segment.requested) actions.push({ type: 'http', sequence: segment.sequence, reason: 'urgent' });
      continue;
    }

    // An elected origin fetcher, unless someone else already fetches or has the segment.
    if (segment.seedAtMs !== undefined && !segment.seedSatisfied) {
      if (segment.seedAtMs > nowMs) wake(segment.seedAtMs);
      else if (!playerOnOrigin()) actions.push({ type: 'http', sequence: segment.sequence, reason: 'seed' });
      continue;
    }

    const p2pAllowed = input.p2pDownload && segment.wastedP2PTransfers < MAX_WASTED_P2P_TRANSFERS;
    const holders = p2pAllowed ? input.peers.filter((peer) => peer.offers.has(segment.sequence)) : [];
    if (holders.length > 0) {
      // Only a transfer that can finish before the deadline at the peer's expected rate is started.
      const fastest = fastestInTime(holders, segment.sizeBytes, timeLeftMs, httpNeedMs);
      if (fastest) {
        actions.push({ type: 'p2p', sequence: segment.sequence, peerId: fastest.id });
        busyPeers.add(fastest.id);
        p2pInFlight++;
        continue;
      }
      if (segment.requested && windows.p2pMustLeaveHttpFallback) {
        actions.push({ type: 'http', sequence: segment.sequence, reason: 'no-peer' });
        continue;
      }
      // A holder exists but is busy: wait for it until HTTP must start.
      waitOrFetch(segment, timeLeftMs, httpNeedMs);
      continue;
    }

    if (!segment.requested) continue;
    // Worth waiting only if some peer is expected to get it: one is fetching it, or (live)
    // elected peers will fetch each new segment from the origin.
    const expectFromPeers =
      input.p2pDownload && windows.waitForPeers && input.peers.length > 0 && (segment.comingFromPeer || input.isLive);
    if (expectFromPeers) waitOrFetch(segment, timeLeftMs, httpNeedMs);
    else actions.push({ type: 'http', sequence: segment.sequence, reason: 'no-peer' });
  }
  if (wakeAtMs < Infinity) actions.push({ type: 'wake', atMs: wakeAtMs });
  return actions;
}

// ---- the rest of the plan: what the engine reads around plan() (and prefetch-window.ts) ----

export { PREFETCH_STORE_SHARE, firstEndingAfter, prefetchWindow } from './prefetch-window.js';

/** A segment's size: exact for byte ranges, else estimated from the stream's bitrate (bytes per second of media). */
export function estimatedSegmentBytes(ref: SegmentRef, bytesPerS: number): number {
  return ref.byteRange ? ref.byteRange.end - ref.byteRange.start : Math.round(bytesPerS * ref.durationS);
}


export interface ParkedInput {
  nowMs: number;
  /** When the integrity manifest can be fetched again. */
  recheckAtMs: number;
  /** Whether the player waits for the segment. */
  requested: boolean;
  deadlineMs: number;
  sizeBytes: number;
  httpThroughputBytesPerS: number;
  windows: ModeWindows;
}

/**
 * Complete P2P bytes the manifest does not list yet: check them again once the manifest can be
 * refetched (`recheck`); a player waiting for them may wait for that only while HTTP would still
 * be in time after it, else the origin's copy replaces them (`give-up`); else `wait`.
 */
export function parkedStep(input: ParkedInput): 'recheck' | 'give-up' | 'wait' {
  const httpMustStartMs = input.requested ? input.deadlineMs - httpBudgetMs(input.sizeBytes, input.httpThroughputBytesPerS, input.windows) : Infinity;
  if (input.recheckAtMs <= input.nowMs) return 'recheck';
  return httpMustStartMs <= input.recheckAtMs ? 'give-up' : 'wait';
}

/**
 * When to plan a stream again: at the plan's own wake-up or a parked recheck, and while a P2P
 * transfer runs or a load waits, every `tickIntervalMs` (P2P projections change with every chunk).
 */
export function nextPlanMs(nowMs: number, wakeMs: number, parkedWakeMs: number, p2pInFlight: boolean, loadsWaiting: boolean, tickIntervalMs: number): number {
  return Math.min(wakeMs, parkedWakeMs, p2pInFlight || loadsWaiting ? nowMs + tickIntervalMs : Infinity);
}
