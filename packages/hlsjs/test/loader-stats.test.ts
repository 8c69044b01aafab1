import { describe, expect, it } from 'vitest';
import { loadingTiming, type TimingInputs } from '../src/loader-stats.js';

/** hls.js 1.5/1.6 abr-controller onFragBuffered: the bandwidth sample (bits/s) a loaded fragment produces. */
function hlsBandwidthSample(loading: { start: number; first: number; end: number }, bytes: number, parsingEnd: number, ttfbEstimateMs: number) {
  const processingMs = parsingEnd - loading.start - Math.min(loading.first - loading.start, ttfbEstimateMs);
  return (8000 * bytes) / processingMs;
}

const base: TimingInputs = {
  source: 'p2p',
  bytes: 1_000_000,
  requestMs: 10_000,
  firstByteMs: 10_040,
  nowMs: 10_100,
  joinedTransfer: false,
  estimateBitsPerS: 4_000_000,
  ttfbEstimateMs: 80,
  parseDelayMs: 30,
};

describe('loader timings that keep hls.js ABR honest', () => {
  it('reports an origin download exactly as it happened', () => {
    expect(loadingTiming({ ...base, source: 'http' })).toEqual({ start: 10_000, first: 10_040, end: 10_100 });
  });

  it('times a segment from a fast peer so that hls.js samples its own estimate: no up-switch', () => {
    // 1 MB from a LAN peer in 100 ms would be an 80 Mbit/s sample.
    const loading = loadingTiming(base);
    const sample = hlsBandwidthSample(loading, base.bytes, base.nowMs + base.parseDelayMs, base.ttfbEstimateMs);
    expect(sample).toBeCloseTo(4_000_000, -3);
    expect(loading.end).toBe(base.nowMs);
    expect(loading.first - loading.start).toBe(80);
  });

  it('times a slow P2P transfer (or a store hit after a wait) the same way: no down-switch', () => {
    const slow = { ...base, requestMs: 0, firstByteMs: 5000, nowMs: 9000 };
    const sample = hlsBandwidthSample(loadingTiming(slow), slow.bytes, slow.nowMs + slow.parseDelayMs, slow.ttfbEstimateMs);
    expect(sample).toBeCloseTo(4_000_000, -3);
    const stored = { ...base, source: 'store' as const, firstByteMs: undefined };
    expect(hlsBandwidthSample(loadingTiming(stored), stored.bytes, stored.nowMs + 30, 80)).toBeCloseTo(4_000_000, -3);
  });

  it('does not let an origin transfer that began before hls.js asked pass for a fast download', () => {
    const joined = { ...base, source: 'http' as const, joinedTransfer: true };
    expect(hlsBandwidthSample(loadingTiming(joined), joined.bytes, joined.nowMs + 30, 80)).toBeCloseTo(4_000_000, -3);
  });

  it('stays sane without an estimate and with a parse delay longer than the transfer', () => {
    const timing = loadingTiming({ ...base, estimateBitsPerS: Number.NaN, parseDelayMs: 1e6 });
    expect(timing.end).toBe(base.nowMs);
    expect(timing.first).toBeLessThan(timing.end);
    expect(timing.start).toBeLessThanOrEqual(timing.first);
  });
});
