import { describe, expect, it } from 'vitest';
import {
  baselineVerdict,
  countersAgreement,
  efficiency,
  idealOffload,
  offload,
  offloadOverTime,
  originFetchesPerSegment,
  originSaving,
  percentile,
  startupMs,
  summarizeStalls,
  viewerWasteBytes,
} from '../src/swarm/metrics.js';

// Figures below come from a 3-viewer live-normal run on this machine (out/try4): 40 s,
// 360p segments of ~185 kB.
describe('swarm metrics', () => {
  it('offload is 1 - origin bytes / bytes delivered to the players', () => {
    // shoal: origin sent 6,100,000 B, the three players were handed 8,646,308 B.
    expect(offload(6_100_000, 8_646_308)).toBeCloseTo(0.2945, 4);
    // HTTP only: the origin sent exactly what the players got.
    expect(offload(13_393_872, 13_393_872)).toBe(0);
    // Aborted downloads make the origin send more than was delivered: offload goes negative.
    expect(offload(5_341_080, 5_151_952)).toBeCloseTo(-0.0367, 4);
    expect(offload(1_000, 0)).toBeNull();
  });

  it('ideal is 1 - 1/N, or (K - 1)/N when only K of N viewers share', () => {
    expect(idealOffload(4)).toBe(0.75);
    expect(idealOffload(8)).toBe(0.875);
    expect(idealOffload(8, 4)).toBe(0.375);
    expect(idealOffload(1)).toBe(0);
    expect(idealOffload(8, 0)).toBe(0);
  });

  it('efficiency is offload / ideal', () => {
    expect(efficiency(0.2945, idealOffload(3))).toBeCloseTo(0.44175, 5);
    expect(efficiency(0.6, 0.75)).toBeCloseTo(0.8, 10);
    expect(efficiency(null, 0.75)).toBeNull();
    expect(efficiency(0.1, 0)).toBeNull();
  });

  it('origin fetches per segment divides origin bytes by the distinct segment bytes', () => {
    // 3 HTTP-only viewers of a live stream: each distinct segment left the origin 2.8 times
    // (viewers joined at different live positions, so not all saw every segment).
    expect(originFetchesPerSegment(13_393_872, 4_783_526)).toBeCloseTo(2.8, 3);
    expect(originFetchesPerSegment(185_192, 185_192)).toBe(1);
    expect(originFetchesPerSegment(0, 0)).toBeNull();
  });

  it('origin saving compares origin bytes with the HTTP-only baseline of the same viewing', () => {
    expect(originSaving(6_100_000, 13_393_872)).toBeCloseTo(0.5446, 4);
    expect(originSaving(13_393_872, 13_393_872)).toBe(0);
    expect(originSaving(1, 0)).toBeNull();
  });

  it('waste is what a viewer downloaded over HTTP or P2P and never played', () => {
    expect(viewerWasteBytes({ httpBytes: 2_446_632, p2pBytes: 702_744, playedBytes: 2_265_400 })).toBe(883_976);
    // Played more than downloaded cannot happen, but must not give negative waste.
    expect(viewerWasteBytes({ httpBytes: 100, p2pBytes: 0, playedBytes: 150 })).toBe(0);
  });

  it('counters agree with the origin within 2% and not beyond', () => {
    expect(countersAgreement(13_393_872, 13_393_872)).toEqual({ agree: true, relativeDifference: 0 });
    const close = countersAgreement(10_145_232, 10_000_000);
    expect(close.agree).toBe(true);
    expect(close.relativeDifference).toBeCloseTo(0.01432, 5);
    const far = countersAgreement(10_145_232, 9_888_612);
    expect(far.agree).toBe(false);
    expect(far.relativeDifference).toBeCloseTo(0.02529, 5);
    expect(countersAgreement(5_332_056, 159_424).agree).toBe(false);
  });

  it('stalls count and last until playing resumes, an open one until the snapshot', () => {
    const stalls = [
      { startMs: 10_000, endMs: 11_500, atS: 8 },
      { startMs: 20_000, endMs: null, atS: 17 },
    ];
    expect(summarizeStalls(stalls, 22_250)).toEqual({ count: 2, seconds: 3.75 });
    expect(summarizeStalls([], 22_250)).toEqual({ count: 0, seconds: 0 });
  });

  it('startup runs from navigation to the first frame', () => {
    expect(startupMs({ navigationStartMs: 1_795_299_592_016, firstFrameMs: 1_795_299_592_591 })).toBe(575);
    expect(startupMs({ navigationStartMs: 1_000, firstFrameMs: null })).toBeNull();
  });

  it('percentiles use the nearest rank', () => {
    expect(percentile([575, 517, 606, 1_204], 50)).toBe(575);
    expect(percentile([10.1, 10.3, 11.2], 50)).toBe(10.3);
    expect(percentile([], 50)).toBeNull();
  });

  it('offload over time is computed per interval and cumulatively', () => {
    const points = offloadOverTime([
      { tS: 5, originSegmentBytes: 2_000_000, deliveredBytes: 2_000_000 },
      { tS: 10, originSegmentBytes: 2_500_000, deliveredBytes: 4_000_000 },
      { tS: 15, originSegmentBytes: 2_500_000, deliveredBytes: 4_000_000 },
    ]);
    expect(points.map((point) => point.offload)).toEqual([0, 0.75, null]);
    expect(points.map((point) => point.cumulative)).toEqual([0, 0.375, 0.375]);
  });

  it('calls the run invalid when the HTTP-only baseline itself stalls or cannot start', () => {
    expect(baselineVerdict({ viewers: 4, started: 4, stallCount: 0, stallSeconds: 0, viewerMinutes: 4 }).valid).toBe(true);
    expect(baselineVerdict({ viewers: 4, started: 4, stallCount: 1, stallSeconds: 0.5, viewerMinutes: 4 }).valid).toBe(true);
    const stalled = baselineVerdict({ viewers: 8, started: 8, stallCount: 6, stallSeconds: 9, viewerMinutes: 16 });
    expect(stalled.valid).toBe(false);
    expect(stalled.reason).toMatch(/too loaded for 8 viewers/);
    expect(baselineVerdict({ viewers: 4, started: 4, stallCount: 2, stallSeconds: 12, viewerMinutes: 4 }).valid).toBe(false);
    expect(baselineVerdict({ viewers: 4, started: 3, stallCount: 0, stallSeconds: 0, viewerMinutes: 3 }).reason).toMatch(/only 3 of 4/);
  });
});
