// The timings the fragment loader reports to hls.js. hls.js's ABR samples bandwidth from them
// (abr-controller onFragBuffered: loaded bytes over parsing.end - loading.start, less the TTFB),
// so they decide its up- and down-switches. Bytes the origin sent for this request are reported
// as they happened. Bytes from peers or the store say nothing about the origin path the next
// rendition would come over: they are timed as if they had arrived at hls.js's own current
// estimate, and the sample they produce equals that estimate. ABR neither climbs because a
// peer on the LAN was fast nor falls because P2P took its time.
import type { SegmentSource } from '@shoal/core';

export interface LoadingTiming {
  start: number;
  first: number;
  end: number;
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
  /** hls.js's bandwidth estimate, bits/s (hls.bandwidthEstimate, or its default estimate before any sample). */
  estimateBitsPerS: number;
  /** hls.js's TTFB estimate, ms. */
  ttfbEstimateMs: number;
  /** Typical time from the end of loading to the end of parsing, ms: hls.js counts it in its sample. */
  parseDelayMs: number;
}

export function loadingTiming(inputs: TimingInputs): LoadingTiming {
  const { nowMs } = inputs;
  if (inputs.source === 'http' && !inputs.joinedTransfer) {
    const first = Math.min(nowMs, Math.max(inputs.requestMs, inputs.firstByteMs ?? nowMs));
    return { start: inputs.requestMs, first, end: nowMs };
  }
  const estimate = inputs.estimateBitsPerS > 0 && Number.isFinite(inputs.estimateBitsPerS) ? inputs.estimateBitsPerS : 500_000;
  const transferMs = (inputs.bytes * 8 * 1000) / estimate;
  // hls.js adds the parse time to the transfer time in its sample; leave room for it so the sample is the estimate.
  const reportedMs = Math.max(transferMs - Math.max(0, inputs.parseDelayMs), transferMs / 2, 1);
  const ttfb = Math.max(0, Math.min(inputs.ttfbEstimateMs, 1000));
  const first = nowMs - reportedMs;
  return { start: first - ttfb, first, end: nowMs };
}
