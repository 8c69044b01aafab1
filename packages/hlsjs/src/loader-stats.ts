// The timings the fragment loader reports to hls.js. hls.js's ABR samples bandwidth from them
// (abr-controller onFragBuffered: loaded bytes over parsing.end - loading.start, less the TTFB),
// so they decide its up- and down-switches; its next rendition would come from the origin, so the
// samples must say what the origin would deliver. Bytes the origin sent for this request are
// reported as they happened. Bytes from peers or the store, or from an origin transfer already
// under way before hls.js asked, are timed as if they had come over HTTP at the origin throughput
// the engine measures on all its own downloads (player loads, live-edge seeding, Range resumes):
// ABR neither climbs because a peer on the LAN was fast nor falls because P2P took its time, and
// it tracks the origin even when most segments come from peers. Before the engine has timed any
// origin transfer there is nothing honest to report: the load is marked unsampled.
// (Timing P2P at hls.js's own estimate instead feeds the estimator its own output: it stays
// pinned at its start value, 500 kbit/s by default, and never up-switches.)
import type { SegmentSource } from '@shoal/core';

export interface LoadingTiming {
  start: number;
  first: number;
  end: number;
}

export interface ReportedTiming {
  loading: LoadingTiming;
  /** false: hls.js must leave this load out of its bandwidth estimate. */
  sampled: boolean;
}

export interface TimingInputs {
  source: SegmentSource;
  bytes: number;
  /** performance.now() when hls.js called load(). */
  requestMs: number;
  /** performance.now() of the first progress for this load; undefined when none came. */
  firstByteMs: number | undefined;
  /** performance.now() now, as the load completes. */
  nowMs: number;
  /** Bytes had already been fetched (for another reason) when hls.js asked: real timing would flatter the origin. */
  joinedTransfer: boolean;
  /** Origin throughput the engine measured, bytes/s; undefined before its first measurement. */
  originBytesPerS: number | undefined;
  /** hls.js's TTFB estimate, ms: what an origin request would have waited for its first byte. */
  ttfbEstimateMs: number;
}

/** Longest TTFB reported for a load that did not wait on the origin. */
const MAX_REPORTED_TTFB_MS = 1000;

export function loadingTiming(inputs: TimingInputs): ReportedTiming {
  const { nowMs } = inputs;
  if (inputs.source === 'http' && !inputs.joinedTransfer) {
    const first = Math.min(nowMs, Math.max(inputs.requestMs, inputs.firstByteMs ?? nowMs));
    return { loading: { start: inputs.requestMs, first, end: nowMs }, sampled: true };
  }
  const ttfbMs = Number.isFinite(inputs.ttfbEstimateMs) ? Math.max(0, Math.min(inputs.ttfbEstimateMs, MAX_REPORTED_TTFB_MS)) : 0;
  const origin = inputs.originBytesPerS;
  if (origin === undefined || !(origin > 0) || !Number.isFinite(origin)) {
    return { loading: { start: nowMs - ttfbMs, first: nowMs, end: nowMs }, sampled: false };
  }
  const transferMs = Math.max((inputs.bytes / origin) * 1000, 1);
  const first = nowMs - transferMs;
  return { loading: { start: first - ttfbMs, first, end: nowMs }, sampled: true };
}
