// The timings the fragment loader reports to hls.js. hls.js's ABR samples bandwidth from them
// (abr-controller onFragBuffered: loaded bytes over parsing.end - loading.start, less the TTFB),
// so they decide its up- and down-switches; its next rendition would come from the origin, so the
// samples must say what the origin would deliver. A segment the origin sent in one request made
// after hls.js asked is reported as that request happened, from its own start: time the engine
// spent waiting for peers or for an elected seeder first is no slowness of the origin (counted, it
// made an instant download look like a 500 kbit/s one). Bytes from peers or the store, or from an
// origin request made before hls.js asked (live-edge seeding), are timed as if they had come over HTTP at the origin throughput
// the engine measures on all its own downloads (player loads, live-edge seeding, Range resumes):
// ABR neither climbs because a peer on the LAN was fast nor falls because P2P took its time, and
// it tracks the origin even when most segments come from peers. Before the engine has timed any
// origin transfer there is nothing honest to report: the load is marked unsampled.
// (Timing P2P at hls.js's own estimate instead feeds the estimator its own output: it stays
// pinned at its start value, 500 kbit/s by default, and never up-switches.)
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
  bytes: number;
  /** performance.now() now, as the load completes. */
  nowMs: number;
  /**
   * The origin request that delivered the whole segment, if one did and it started once hls.js had
   * asked (performance.now() times). One started earlier would flatter the origin: leave it out.
   */
  originRequest: { startMs: number; firstByteMs: number } | undefined;
  /** Origin throughput the engine measured, bytes/s; undefined before its first measurement. */
  originBytesPerS: number | undefined;
  /** hls.js's TTFB estimate, ms: what an origin request would have waited for its first byte. */
  ttfbEstimateMs: number;
}

/** Longest TTFB reported for a load that did not wait on the origin. */
const MAX_REPORTED_TTFB_MS = 1000;

export function loadingTiming(inputs: TimingInputs): ReportedTiming {
  const { nowMs, originRequest } = inputs;
  if (originRequest) {
    const start = Math.min(originRequest.startMs, nowMs);
    const first = Math.min(nowMs, Math.max(start, originRequest.firstByteMs));
    return { loading: { start, first, end: nowMs }, sampled: true };
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
