import { describe, expect, it } from 'vitest';
import { networkProfile, viewerLink } from '../src/network-profiles.js';
import {
  baselineVerdict,
  capacityBound,
  countersAgreement,
  efficiency,
  idealOffload,
  offload,
  offloadOverTime,
  originFetchesPerSegment,
  originSaving,
  percentile,
  shareOfBound,
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

  describe('capacity bound', () => {
    const bitrate = 684_000;
    /** N viewers of `profile` in a 180-s run, each played at the bitrate throughout. */
    const steadyRun = (profile: string, viewers: number) => {
      const links = Array.from({ length: viewers }, (_, index) => viewerLink(networkProfile(profile), index, bitrate));
      const presence = links.map((link) => ({ uplinkBitsPerS: link.uploads ? link.upBitsPerS : 0, presentS: 180 }));
      return capacityBound(idealOffload(viewers), presence, (viewers * bitrate * 180) / 8);
    };

    it('is the uplink / the bitrate on realistic links (0.44 of 684 kbit/s), far below 1 - 1/N', () => {
      const bound = steadyRun('realistic', 1000);
      expect(bound.uplink).toBeCloseTo(0.44, 6);
      expect(bound.bound).toBeCloseTo(0.439, 2);
      expect(bound.ideal).toBe(0.999);
      expect(bound.uplinkBytes).toBe(1000 * (300_960 / 8) * 180);
    });

    it('is the ideal where uplinks are unlimited, or carry more than the viewers play (critical: 1.2x)', () => {
      expect(steadyRun('unlimited', 8)).toEqual({ bound: 0.875, ideal: 0.875, uplink: null, uplinkBytes: null });
      const critical = steadyRun('critical', 8);
      expect(critical.uplink).toBeCloseTo(1.2, 6);
      expect(critical.bound).toBe(0.875);
    });

    it('is lower when a share of the viewers does not upload', () => {
      // 4 viewers at 0.44x and 4 that do not upload: half the capacity for the same viewing.
      const presence = [...Array(4).fill({ uplinkBitsPerS: 300_960, presentS: 180 }), ...Array(4).fill({ uplinkBitsPerS: 0, presentS: 180 })];
      const bound = capacityBound(idealOffload(8), presence, (8 * bitrate * 180) / 8);
      expect(bound.bound).toBeCloseTo(0.22, 6);
      // mixed-nonuploading: the six uploaders carry 22.8x the stream between them, well over 8 viewers' playing.
      expect(steadyRun('mixed-nonuploading', 8).uplink).toBeCloseTo(22.8 / 8, 2);
      expect(steadyRun('mixed-nonuploading', 8).bound).toBe(0.875);
    });

    it('counts each viewer\'s uplink only while it was in the swarm', () => {
      const presence = [{ uplinkBitsPerS: 800_000, presentS: 100 }, { uplinkBitsPerS: 800_000, presentS: 50 }];
      expect(capacityBound(0.5, presence, 100_000_000).uplink).toBeCloseTo(0.15, 10);
    });

    it('is 0 for a single viewer, who has nobody to share with', () => {
      expect(steadyRun('realistic', 1).bound).toBe(0);
      expect(steadyRun('unlimited', 1).bound).toBe(0);
    });

    it('leaves the uplink part out when nothing was delivered', () => {
      expect(capacityBound(0.75, [{ uplinkBitsPerS: 300_000, presentS: 10 }], 0)).toEqual({ bound: 0.75, ideal: 0.75, uplink: null, uplinkBytes: 375_000 });
    });

    it('gives the offload as a share of the bound', () => {
      expect(shareOfBound(0.33, 0.44)).toBeCloseTo(0.75, 10);
      expect(shareOfBound(null, 0.44)).toBeNull();
      expect(shareOfBound(0, 0)).toBeNull();
    });
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
