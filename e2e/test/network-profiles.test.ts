import { describe, expect, it } from 'vitest';
import { networkProfile, networkProfiles, viewerLink } from '../src/network-profiles.js';
import { simLink } from '../src/sim/sim-scenarios.js';
import { Prng } from '../src/sim/prng.js';

describe('network profiles', () => {
  it('give uplinks as multiples of the stream bitrate, taken in turn by viewer index', () => {
    const mixed = networkProfile('mixed');
    const uplinks = [0, 1, 2, 3, 4].map((index) => viewerLink(mixed, index, 684_000).upBitsPerS);
    expect(uplinks).toEqual([300_960, 998_640, 3_002_760, 9_986_400, 300_960]);
    expect(viewerLink(networkProfile('realistic'), 7, 284_000)).toEqual({ upBitsPerS: 124_960, downBitsPerS: 2_000_000, uplinkQueueMs: 600 });
    expect(viewerLink(networkProfile('unlimited'), 0, 684_000).upBitsPerS).toBe(Infinity);
  });

  it('are the simulator\'s links, in bytes, with a latency drawn in the profile\'s range', () => {
    for (const profile of Object.values(networkProfiles)) {
      const link = simLink(profile, 1, 684_000, new Prng(1));
      expect(link.upBytesPerS).toBe(viewerLink(profile, 1, 684_000).upBitsPerS / 8);
      expect(link.downBytesPerS).toBe(profile.downBitsPerS / 8);
      expect(link.latencyMs).toBeGreaterThanOrEqual(profile.latencyMs[0]);
      expect(link.latencyMs).toBeLessThanOrEqual(profile.latencyMs[1]);
      expect(link.uplinkQueueMs).toBe(profile.uplinkQueueMs);
    }
  });

  it('name the unknown profile and list the known ones', () => {
    expect(() => networkProfile('dsl')).toThrow('unknown network profile "dsl"; one of: unlimited, realistic, critical, mixed');
  });
});
