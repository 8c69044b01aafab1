import { describe, expect, it } from 'vitest';
import { describeUplinkAccount, uplinkAccount, type EngineCounters } from '../src/swarm/uplink-account.js';

const counters = (over: { uploadBytes?: number; ms?: Partial<EngineCounters['upload']['uplink']['ms']>; bytes?: Partial<EngineCounters['upload']['uplink']['bytes']>; origin?: Partial<EngineCounters['originBytes']>; cancelled?: [number, number] }): EngineCounters => ({
  uploadBytes: over.uploadBytes ?? 0,
  originBytes: { seed: 0, urgent: 0, range: 0, refetch: 0, ...over.origin },
  upload: {
    uplink: {
      ms: { idle: 0, yielding: 0, relay: 0, paced: 0, full: 0, ...over.ms },
      bytes: { idle: 0, yielding: 0, relay: 0, paced: 0, full: 0, ...over.bytes },
      cancelledUploads: over.cancelled?.[0] ?? 0,
      cancelledBytes: over.cancelled?.[1] ?? 0,
    },
  },
});

describe('the uplink account', () => {
  it('splits what the links could carry into sent and the unused rest by cause, from the period start', () => {
    const account = uplinkAccount({
      fromS: 30,
      periodS: 100,
      streamBytesPerS: 1000,
      viewers: [
        // 10 kB/s for 100 s: 1 MB; 400 kB sent while paced (its 40 s could carry 400 kB: nothing unused), 60 s nobody asked.
        {
          uploads: true, capBytesPerS: 10_000,
          from: counters({ uploadBytes: 50_000, ms: { idle: 5_000 }, bytes: { idle: 50_000 } }),
          to: counters({ uploadBytes: 450_000, ms: { idle: 65_000, paced: 40_000 }, bytes: { idle: 50_000, paced: 400_000 }, origin: { seed: 40_000, urgent: 20_000 }, cancelled: [2, 3000] }),
        },
        // Joined during the period: counted from its start; 50 s yielding, nothing sent.
        { uploads: true, capBytesPerS: 10_000, from: undefined, to: counters({ ms: { yielding: 50_000 }, origin: { urgent: 50_000, range: 10_000 } }) },
        // Does not upload: its origin bytes count, its uplink does not.
        { uploads: false, capBytesPerS: 32_000, from: undefined, to: counters({ ms: { idle: 100_000 }, origin: { urgent: 80_000 } }) },
      ],
      hopCounts: [0, 6, 3, 1],
    });
    expect(account.uploaders).toBe(2);
    expect(account.capacityBytes).toBe(1_500_000);
    expect(account.sentBytes).toBe(400_000);
    expect(account.utilisation).toBeCloseTo(400_000 / 1_500_000);
    expect(account.unusedByCause).toEqual({ idle: 600_000 / 1_100_000, yielding: 500_000 / 1_100_000, relay: 0, paced: 0, full: 0 });
    expect(account.originCopiesPerSegment).toEqual({ seed: 0.4, urgent: 1.5, range: 0.1, refetch: 0, total: 2 });
    expect(account).toMatchObject({ cancelledUploads: 2, cancelledBytes: 3000 });
    expect(account.hopDepth).toEqual({ copies: 10, byDepth: [0, 6, 3, 1], mean: 1.5 });
    expect(describeUplinkAccount(account)).toContain('used 26.7% of what they could carry; the unused rest: nobody asked 54.5%, yielding to the viewer\'s own playback 45.5%');
  });

  it('has no utilisation where a link is unlimited, and no hop depths where none were counted', () => {
    const account = uplinkAccount({
      fromS: 0, periodS: 10, streamBytesPerS: 1000,
      viewers: [{ uploads: true, capBytesPerS: Infinity, from: undefined, to: counters({ uploadBytes: 5000, ms: { idle: 10_000 } }) }],
    });
    expect(account).toMatchObject({ capacityBytes: null, utilisation: null, unusedByCause: null, hopDepth: null, sentBytes: 5000 });
  });
});
