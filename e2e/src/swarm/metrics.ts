// The swarm's figures, as pure functions of what the origin and the viewers counted.
// Definitions: DESIGN.md, "Measuring".
import type { StallRecord, ViewerSnapshot } from './viewer-snapshot.js';

/** 1 - origin segment bytes / segment bytes delivered to all players; null when nothing played. */
export function offload(originSegmentBytes: number, deliveredBytes: number): number | null {
  if (deliveredBytes <= 0) return null;
  return 1 - originSegmentBytes / deliveredBytes;
}

/**
 * Best possible offload when each segment leaves the origin once: 1 - 1/N. Viewers with P2P
 * off fetch everything themselves, so with K of N viewers sharing it is (K - 1) / N.
 */
export function idealOffload(viewers: number, p2pViewers = viewers): number {
  if (viewers <= 0) return 0;
  return Math.max(0, p2pViewers - 1) / viewers;
}

export function efficiency(measuredOffload: number | null, ideal: number): number | null {
  if (measuredOffload === null || ideal <= 0) return null;
  return measuredOffload / ideal;
}

/** One viewer's uplink and how long it was there to use it. */
export interface UplinkPresence {
  /** What the viewer's uplink can carry to peers, bits/s: Infinity for no limit, 0 when it does not upload. */
  uplinkBitsPerS: number;
  /** From joining to leaving, or to the end of the run. */
  presentS: number;
}

export interface CapacityBound {
  /** min(ideal, uplink): the most offload this viewing allowed. */
  bound: number;
  /** 1 - 1/N, or (K - 1)/N with K of N viewers sharing (idealOffload). */
  ideal: number;
  /**
   * Segment bytes the viewers' uplinks could have carried to peers while present / segment bytes
   * delivered to players: may exceed 1. null when an uploading viewer's uplink has no limit (it
   * alone could serve everyone) or nothing was delivered.
   */
  uplink: number | null;
  /** The numerator of `uplink`; null when an uploading viewer's uplink has no limit. */
  uplinkBytes: number | null;
}

/**
 * The capacity bound: every byte a player got from a peer crossed some viewer's uplink, so the
 * offload (1 - origin bytes / delivered bytes, origin bytes being at least what players got over
 * HTTP) cannot exceed the uplinks' capacity over the viewers' time in the swarm / delivered bytes;
 * nor 1 - 1/N. Delivered bytes, not bitrate × time, are the denominator: they are the offload's own,
 * so the bound holds for the run measured, startup buffering and stalls included. On a steady
 * stream they come to about the bitrate × time watched, and the uplink part to uplink / bitrate
 * (realistic: 0.44, 301 of 684 kbit/s).
 *
 * An upper bound, not a forecast. It leaves out, so runs fall short of it: what else crosses the
 * uplinks (the viewer's own HTTP requests, TCP and SCTP acknowledgements, ICE and DTLS upkeep,
 * peer-protocol messages, packet headers); that a segment must reach someone from the origin before
 * any uplink can pass it on, within the player's few segments of slack; and uplink time when no
 * peer needs what its viewer holds.
 */
export function capacityBound(ideal: number, viewers: readonly UplinkPresence[], deliveredBytes: number): CapacityBound {
  let uplinkBytes = 0;
  for (const viewer of viewers) if (viewer.uplinkBitsPerS > 0 && viewer.presentS > 0) uplinkBytes += (viewer.uplinkBitsPerS / 8) * viewer.presentS;
  if (!Number.isFinite(uplinkBytes)) return { bound: ideal, ideal, uplink: null, uplinkBytes: null };
  const uplink = deliveredBytes > 0 ? uplinkBytes / deliveredBytes : null;
  return { bound: uplink === null ? ideal : Math.min(ideal, uplink), ideal, uplink, uplinkBytes };
}

/** Offload as a share of the capacity bound; null when nothing was measured or nothing was possible. */
export function shareOfBound(measuredOffload: number | null, bound: number): number | null {
  if (measuredOffload === null || bound <= 0) return null;
  return measuredOffload / bound;
}

/** How many times, on average, the origin sent each distinct segment (ideal 1.0). */
export function originFetchesPerSegment(originSegmentBytes: number, distinctSegmentBytes: number): number | null {
  if (distinctSegmentBytes <= 0) return null;
  return originSegmentBytes / distinctSegmentBytes;
}

/** 1 - origin bytes with P2P / origin bytes of the HTTP-only baseline for the same viewing. */
export function originSaving(originBytes: number, baselineOriginBytes: number): number | null {
  if (baselineOriginBytes <= 0) return null;
  return 1 - originBytes / baselineOriginBytes;
}

/** Bytes a viewer downloaded (HTTP or P2P) that it never played. */
export function viewerWasteBytes(viewer: Pick<ViewerSnapshot, 'httpBytes' | 'p2pBytes' | 'playedBytes'>): number {
  return Math.max(0, viewer.httpBytes + viewer.p2pBytes - viewer.playedBytes);
}

export interface CountersAgreement {
  agree: boolean;
  /** |client HTTP bytes - origin bytes| / origin bytes. */
  relativeDifference: number;
}

/** The viewers' own HTTP counters against the origin's count (the ground truth). */
export function countersAgreement(originSegmentBytes: number, clientHttpBytes: number, tolerance = 0.02): CountersAgreement {
  const reference = Math.max(originSegmentBytes, 1);
  const relativeDifference = Math.abs(clientHttpBytes - originSegmentBytes) / reference;
  return { agree: relativeDifference <= tolerance, relativeDifference };
}

/** Nearest-rank percentile (p in 0..100); null for no values. */
export function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function mean(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}

export interface StallSummary {
  count: number;
  seconds: number;
}

/** Stalls after the first frame; one still open is counted up to `untilMs`. */
export function summarizeStalls(stalls: readonly StallRecord[], untilMs: number): StallSummary {
  let seconds = 0;
  for (const stall of stalls) seconds += Math.max(0, (stall.endMs ?? untilMs) - stall.startMs) / 1000;
  return { count: stalls.length, seconds };
}

/** Navigation start to the first `playing` event; null if the viewer never played. */
export function startupMs(viewer: Pick<ViewerSnapshot, 'navigationStartMs' | 'firstFrameMs'>): number | null {
  return viewer.firstFrameMs === null ? null : viewer.firstFrameMs - viewer.navigationStartMs;
}

export interface TimelinePoint {
  /** Seconds since the run started. */
  tS: number;
  originSegmentBytes: number;
  deliveredBytes: number;
}

export interface OffloadPoint {
  tS: number;
  /** Offload within the interval ending at tS; null when nothing was delivered in it. */
  offload: number | null;
  /** Offload from the start of the run to tS. */
  cumulative: number | null;
}

/** Offload per sampling interval and cumulative, from cumulative counts. */
export function offloadOverTime(points: readonly TimelinePoint[]): OffloadPoint[] {
  let previous: TimelinePoint = { tS: 0, originSegmentBytes: 0, deliveredBytes: 0 };
  return points.map((point) => {
    const interval = offload(point.originSegmentBytes - previous.originSegmentBytes, point.deliveredBytes - previous.deliveredBytes);
    previous = point;
    return {
      tS: point.tS,
      offload: interval === null ? null : Math.max(-1, interval),
      cumulative: offload(point.originSegmentBytes, point.deliveredBytes),
    };
  });
}

export interface LoadVerdict {
  valid: boolean;
  reason: string;
}

/**
 * Whether the machine played the HTTP-only baseline smoothly: if hls.js alone stalls or cannot
 * start here, stalls measured with P2P say nothing about P2P.
 */
export function baselineVerdict(baseline: {
  viewers: number;
  started: number;
  stallCount: number;
  stallSeconds: number;
  viewerMinutes: number;
}): LoadVerdict {
  if (baseline.started < baseline.viewers) {
    return { valid: false, reason: `only ${baseline.started} of ${baseline.viewers} baseline (HTTP-only) viewers started playing` };
  }
  const stallSecondsPerViewerMinute = baseline.viewerMinutes > 0 ? baseline.stallSeconds / baseline.viewerMinutes : 0;
  if (baseline.stallCount > baseline.viewers / 2 || stallSecondsPerViewerMinute > 1) {
    return {
      valid: false,
      reason:
        `the HTTP-only baseline itself stalled (${baseline.stallCount} stalls, ` +
        `${stallSecondsPerViewerMinute.toFixed(2)} s per viewer-minute): the machine is too loaded for ${baseline.viewers} viewers`,
    };
  }
  return { valid: true, reason: 'the HTTP-only baseline played smoothly' };
}
