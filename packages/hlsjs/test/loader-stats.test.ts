import Hls from 'hls.js';
import type { LoaderStats } from 'hls.js';
import { describe, expect, it } from 'vitest';
import { loadingTiming, type TimingInputs } from '../src/loader-stats.js';

/** hls.js 1.5/1.6 abr-controller onFragBuffered: the bandwidth sample (bits/s) a loaded fragment produces. */
function hlsBandwidthSample(loading: { start: number; first: number; end: number }, bytes: number, parsingEnd: number, ttfbEstimateMs: number) {
  const processingMs = parsingEnd - loading.start - Math.min(loading.first - loading.start, ttfbEstimateMs);
  return (8000 * bytes) / processingMs;
}

const base: TimingInputs = {
  bytes: 1_000_000,
  nowMs: 10_100,
  originRequest: undefined,
  originBytesPerS: 500_000,
  ttfbEstimateMs: 80,
};

describe('loader timings that keep hls.js ABR honest', () => {
  it('reports an origin download exactly as it happened, from its request', () => {
    const originRequest = { startMs: 10_000, firstByteMs: 10_040 };
    expect(loadingTiming({ ...base, originRequest })).toEqual({ loading: { start: 10_000, first: 10_040, end: 10_100 }, sampled: true });
  });

  it('leaves out the time the engine waited for peers before it asked the origin: no down-switch', () => {
    // hls.js asked at 7000; peers had nothing, so the engine asked the origin at 10_000.
    const { loading } = loadingTiming({ ...base, originRequest: { startMs: 10_000, firstByteMs: 10_040 } });
    expect(hlsBandwidthSample(loading, base.bytes, base.nowMs, 80)).toBeCloseTo((8000 * base.bytes) / 60, -3);
  });

  it('times a segment from a fast peer as if the origin had sent it at its measured throughput: no up-switch', () => {
    // 1 MB from a LAN peer in 100 ms would be an 80 Mbit/s sample; the origin does 4 Mbit/s.
    const { loading, sampled } = loadingTiming(base);
    expect(sampled).toBe(true);
    expect(hlsBandwidthSample(loading, base.bytes, base.nowMs, base.ttfbEstimateMs)).toBeCloseTo(4_000_000, -3);
    expect(loading.end).toBe(base.nowMs);
    expect(loading.first - loading.start).toBe(80);
  });

  it('times a slow P2P transfer, a store hit or a seeding transfer made before hls.js asked the same way: no down-switch', () => {
    // Whatever the wall-clock time, only the size and the origin's measured throughput count.
    for (const nowMs of [9000, 10_100, 60_000]) {
      expect(hlsBandwidthSample(loadingTiming({ ...base, nowMs }).loading, base.bytes, nowMs, 80)).toBeCloseTo(4_000_000, -3);
    }
  });

  it('leaves P2P out of the estimate before the engine has timed any origin transfer', () => {
    for (const originBytesPerS of [undefined, 0, Number.NaN, Number.POSITIVE_INFINITY]) {
      const { loading, sampled } = loadingTiming({ ...base, originBytesPerS, ttfbEstimateMs: Number.NaN });
      expect(sampled).toBe(false);
      expect(loading.end).toBe(base.nowMs);
      expect(loading.start).toBeLessThanOrEqual(loading.first);
      expect(loading.first).toBeLessThanOrEqual(loading.end);
    }
  });
});

/**
 * hls.js's own ABR controller, fed the stats of each load the way hls.js feeds it (FRAG_LOADED,
 * then FRAG_BUFFERED once parsed), with the estimator set for live as on a live level load.
 */
function realHlsAbr() {
  const hls = new Hls({ debug: false });
  const abr = (hls as unknown as { abrController: any }).abrController;
  abr.bwEstimator.update(hls.config.abrEwmaSlowLive, hls.config.abrEwmaFastLive);
  let sn = 0;
  return {
    hls,
    buffered(loading: { start: number; first: number; end: number }, bytes: number, sampled: boolean, parseMs: number) {
      const stats = {
        aborted: !sampled, loaded: bytes, total: bytes, retry: 0, chunkCount: 1, bwEstimate: 0,
        loading, parsing: { start: loading.end, end: loading.end + parseMs }, buffering: { start: loading.end, first: loading.end, end: loading.end + parseMs },
      } satisfies LoaderStats;
      const frag = { sn: sn++, level: 1, type: 'main', duration: 2, stats, bitrateTest: false };
      abr.onFragLoaded(Hls.Events.FRAG_LOADED, { frag, part: null });
      abr.onFragBuffered(Hls.Events.FRAG_BUFFERED, { frag, part: null, stats, id: 'main' });
    },
  };
}

describe("hls.js's estimator replayed over a live session served mostly by peers", () => {
  // 360p: 2 s segments of 188 kB (752 kbit/s). The origin does 250 kB/s (2 Mbit/s), 60 ms to first byte;
  // peers on the LAN deliver a segment in 30 ms. hls.js parses a segment in 20 ms.
  const segmentBytes = 188_000;
  const originBytesPerS = 250_000;
  const originTtfbMs = 60;
  const parseMs = 20;
  // What hls.js samples for a segment it loaded over HTTP itself.
  const httpSample = (8 * segmentBytes) / ((segmentBytes / originBytesPerS) + parseMs / 1000);

  /** hls.js's estimate after each load; the engine has measured the origin unless `measured` is false. */
  function replay(originRate: number, sources: ('http' | 'p2p' | 'store')[], measured = true) {
    const { hls, buffered } = realHlsAbr();
    let nowMs = 1000;
    const estimates: number[] = [];
    for (const source of sources) {
      const requestMs = nowMs;
      const wallMs = source === 'http' ? originTtfbMs + (segmentBytes / originRate) * 1000 : source === 'p2p' ? 30 : 0;
      nowMs += wallMs;
      const originRequest = source === 'http' ? { startMs: requestMs, firstByteMs: requestMs + originTtfbMs } : undefined;
      const { loading, sampled } = loadingTiming({
        bytes: segmentBytes, nowMs, originRequest, originBytesPerS: measured ? originRate : undefined, ttfbEstimateMs: hls.ttfbEstimate,
      });
      buffered(loading, segmentBytes, sampled, parseMs);
      estimates.push(hls.bandwidthEstimate);
      nowMs += 2000 - wallMs;
    }
    hls.destroy();
    return estimates;
  }

  // A viewer joining a live swarm: the first segments come from the store (seeded) and peers, one
  // load in ten from the origin. (Timed at hls.js's own estimate, as before, these loads left it at
  // 500, 619, 700, 773 kbit/s after 5, 15, 25, 30 loads: never enough for 360p.)
  const mostlyPeers = Array.from({ length: 30 }, (_, i) => (i % 10 === 5 ? 'http' : i % 5 === 0 ? 'store' : 'p2p') as 'http' | 'p2p' | 'store');

  it('converges to what HTTP delivers, well above the 500 kbit/s start value and below a LAN peer', () => {
    const httpOnly = replay(originBytesPerS, mostlyPeers.map(() => 'http'));
    const shoal = replay(originBytesPerS, mostlyPeers);
    expect(httpOnly.at(-1)!).toBeCloseTo(httpSample, -4);
    expect(shoal.at(-1)! / httpOnly.at(-1)!).toBeGreaterThan(0.95);
    expect(shoal.at(-1)! / httpOnly.at(-1)!).toBeLessThan(1.05);
    // Enough for hls.js to switch up to 360p (752 kbit/s at abrBandWidthUpFactor 0.7 needs 1.07 Mbit/s).
    expect(shoal.at(-1)! * 0.7).toBeGreaterThan(752_000);
    // A peer's 188 kB in 30 ms is 50 Mbit/s: none of that reaches the estimate.
    expect(Math.max(...shoal)).toBeLessThan(1.1 * httpSample);
  });

  it('follows the origin down when it slows, even while peers stay fast', () => {
    const slowOrigin = 60_000; // 480 kbit/s: 360p no longer fits
    const estimates = replay(slowOrigin, mostlyPeers);
    expect(estimates.at(-1)!).toBeLessThan(1.1 * 8 * slowOrigin);
  });

  it('stays at its start value, unmoved by fast peers, until the engine has timed an origin transfer', () => {
    const estimates = replay(originBytesPerS, Array.from({ length: 10 }, () => 'p2p'), false);
    expect(estimates.every((estimate) => estimate === Hls.DefaultConfig.abrEwmaDefaultEstimate)).toBe(true);
  });
});
