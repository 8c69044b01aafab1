// The budgets the plan works with, pure: latency modes and their windows, when the player needs a
// segment, how long HTTP needs for some bytes on a shared downlink, and when to plan again.
import type { LatencyMode, PlaybackReport, SegmentRef } from '../types.js';

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
   * Queueing delay on the viewer's own uplink now, ms (PaceController.queueDelayNowMs): each round
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
export function resolveLatencyMode(mode: LatencyMode, playback: PlaybackReport | undefined, segmentDurationS: number): EffectiveLatencyMode {
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
export function segmentDeadlineMs(nowMs: number, playback: PlaybackReport | undefined, startS: number, reportedAtMs = nowMs): number {
  if (!playback) return nowMs;
  const aheadS = startS - playback.positionS;
  const deadlineMs = playback.rate > 0 ? reportedAtMs + (aheadS / playback.rate) * 1000 : nowMs + aheadS * 1000;
  return Math.max(deadlineMs, nowMs);
}

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
