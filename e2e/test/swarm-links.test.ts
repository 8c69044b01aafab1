import { describe, expect, it } from 'vitest';
import { summarizeNetwork, summarizeViewerLink, type NetworkRecord } from '../src/swarm/link-report.js';

const link = { upBitsPerS: 300_000, downBitsPerS: 2_000_000, uplinkQueueMs: 600, uploads: true };

describe('shaped link report', () => {
  it('gives each direction its mean, busiest window against the cap, and the time the link was full', () => {
    // Up: 37.5 kB/s (the cap) for 10 s, then idle for 10 s. Down: 100 kB/s for 20 s.
    const samples = [0, 5, 10, 15, 20].map((tS) => ({ tS, upBytes: Math.min(tS, 10) * 37_500, downBytes: tS * 100_000 }));
    const report = summarizeViewerLink({ id: 'v0', address: '198.18.1.1', link, samples });
    expect(report.up).toEqual({ capBitsPerS: 300_000, bytes: 375_000, meanBitsPerS: 150_000, peakBitsPerS: 300_000, peakOfCap: 1, fullS: 10 });
    expect(report.down).toMatchObject({ capBitsPerS: 2_000_000, peakBitsPerS: 800_000, peakOfCap: 0.4, fullS: 0 });
  });

  it('says the shaping did not hold when a window went over 110% of a cap, and ignores windows too short to judge', () => {
    const record = (upBytesAt5: number, tS = 5): NetworkRecord => ({
      profile: 'realistic', description: '', nat: null, bitrateBitsPerS: 684_000, uplinkQueueMs: 600, downlinkQueueMs: 200, latencyModel: '',
      viewers: [{ id: 'v0', address: '198.18.1.1', link, samples: [{ tS: 0, upBytes: 0, downBytes: 0 }, { tS, upBytes: upBytesAt5, downBytes: 0 }] }],
    });
    expect(summarizeNetwork(record(5 * 37_500 * 1.05)).shapingHeld).toBe(true);
    expect(summarizeNetwork(record(5 * 37_500 * 1.2)).shapingHeld).toBe(false);
    expect(summarizeNetwork(record(37_500, 0.5)).viewers[0]!.up.peakBitsPerS).toBe(0);
  });

  it('has no cap, ratio or full time for an unlimited direction', () => {
    const report = summarizeViewerLink({ id: 'v0', address: 'a', link: { ...link, upBitsPerS: Infinity }, samples: [{ tS: 0, upBytes: 0, downBytes: 0 }, { tS: 5, upBytes: 1e6, downBytes: 0 }] });
    expect(report.up).toMatchObject({ capBitsPerS: null, peakOfCap: null, fullS: 0, peakBitsPerS: 1_600_000 });
  });
});
