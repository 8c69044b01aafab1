import { describe, expect, it } from 'vitest';
import { deficitSeedShare, type SeedShareInput } from '../src/plan/seed-share.js';

// The sample stream's 360p: 684 kbit/s, 2 s segments of about 171 kB.
const BITRATE_BYTES = 684_000 / 8;
const SEGMENT = BITRATE_BYTES * 2;
const viewers = (count: number, uplinkOfBitrate: number) => Array.from({ length: count }, () => ({ uploadBytesPerS: uplinkOfBitrate * BITRATE_BYTES }));
const share = (input: Partial<SeedShareInput>) =>
  deficitSeedShare({ neighbourhood: viewers(13, 1), streamBytesPerS: BITRATE_BYTES, segmentBytes: SEGMENT, windowMs: 8000, rateSlack: 0.85, ...input });

describe('the share of viewers that fetch a new live segment at publication', () => {
  it('is 1 − ρ where uplinks carry less than the bitrate (realistic: 0.44 of it)', () => {
    expect(share({ neighbourhood: viewers(13, 0.44) })).toBeCloseTo(0.56, 2);
  });

  it('counts viewers that do not upload as demand without supply', () => {
    const neighbourhood = [...viewers(9, 1.2), ...viewers(4, 0)];
    expect(share({ neighbourhood })).toBeCloseTo(1 - (9 * 1.2) / 13, 2);
  });

  it('is 2^-H where uplinks suffice but only H whole-segment hops fit before the deadline (critical: 1.2x)', () => {
    // A hop at 1.2x less the slack: 2 s / (1.2 x 0.85) = 1.96 s; 7.84 s hold 4 hops, 2.94 s one and a half.
    expect(share({ neighbourhood: viewers(13, 1.2), windowMs: 7843 })).toBeCloseTo(1 / 16, 3);
    expect(share({ neighbourhood: viewers(13, 1.2), windowMs: 2941 })).toBeCloseTo(2 ** -1.5, 3);
  });

  it('is 1 when no time is left, and 0 (election alone: about one copy per neighbourhood) on fast uplinks', () => {
    expect(share({ neighbourhood: viewers(13, 1.2), windowMs: 0 })).toBe(1);
    expect(share({ neighbourhood: viewers(13, 100) })).toBe(0);
  });

  it('does not depend on how many viewers there are, only on their rates', () => {
    expect(share({ neighbourhood: viewers(3, 0.44) })).toBeCloseTo(share({ neighbourhood: viewers(30, 0.44) }), 10);
  });

  it('is 0 when no rate is known yet', () => {
    expect(share({ neighbourhood: [] })).toBe(0);
    expect(share({ neighbourhood: viewers(5, 0) })).toBe(0);
  });
});
