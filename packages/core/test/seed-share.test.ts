import { describe, expect, it } from 'vitest';
import { deficitSeedShare, nextIdleCut, type SeedShareInput } from '../src/plan/seed-share.js';
import { LiveEdgeSeeding } from '../src/plan/live-edge-seeding.js';

// The sample stream's 360p: 684 kbit/s, 2 s segments of about 171 kB.
const BITRATE_BYTES = 684_000 / 8;
const SEGMENT = BITRATE_BYTES * 2;
const viewers = (count: number, uplinkOfBitrate: number) => Array.from({ length: count }, () => ({ uploadBytesPerS: uplinkOfBitrate * BITRATE_BYTES }));
const rates = (input: Partial<SeedShareInput>) =>
  deficitSeedShare({ neighbourhood: viewers(13, 1), streamBytesPerS: BITRATE_BYTES, segmentBytes: SEGMENT, windowMs: 8000, rateSlack: 0.85, ...input });

const share = (input: Partial<SeedShareInput>) => rates(input).guess;

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

  it('keeps the hops\' need apart as the floor that an idle uplink cannot cut', () => {
    expect(rates({ neighbourhood: viewers(13, 0.44) }).floor).toBeLessThan(0.56);
    expect(rates({ neighbourhood: viewers(13, 1.2), windowMs: 7843 })).toEqual({ guess: expect.closeTo(1 / 16, 3), floor: expect.closeTo(1 / 16, 3) });
  });
});

describe('an idle uplink cuts its own seed share', () => {
  // What feeds on itself: more seeds, more origin downloads, more uplink for their acknowledgements,
  // less advertised rate, a smaller ρ, more seeds (browser swarm at 63ef136). Here the share can only
  // fall below the rates' share, by how idle the uplink stood, and heal as far back as it.
  const elect = (seeding: LiveEdgeSeeding, sequence: number, guess: number, idleShare: number) =>
    seeding.elect([sequence], 'me', ['you'], undefined, 0, { guess, floor: 0.05, idleShare });
  const seeding = () => new LiveEdgeSeeding('key', { upload: true, p2pDownload: true, seedersPerSegment: 1, seedStaggerMs: 2000 }, () => false, () => {});

  it('converges to the floor while nobody asks, and back to the rates\' share while its uplink is busy, never above it', () => {
    const live = seeding();
    elect(live, 1, 0.6, 0.9);
    for (let sequence = 2; sequence < 30; sequence++) elect(live, sequence, 0.6, 0.9);
    expect(live.share).toBe(0.05);
    const fell: number[] = [];
    for (let sequence = 30; sequence < 60; sequence++) {
      elect(live, sequence, 0.6, 0);
      fell.push(live.share!);
    }
    expect(fell.every((value, i) => i === 0 || value >= fell[i - 1]!)).toBe(true);
    expect(live.share).toBeCloseTo(0.6, 10);
    // A busy uplink is what seeding more makes: it never lifts the share above the rates'.
    for (let sequence = 60; sequence < 90; sequence++) elect(live, sequence, 0.6, 0);
    expect(live.share).toBeCloseTo(0.6, 10);
  });

  it('settles where its uplink is idle a quarter of the time', () => {
    expect(nextIdleCut(0.2, 0.25, 0.6)).toBe(0.2);
    expect(nextIdleCut(0.2, 0.45, 0.6)).toBeCloseTo(0.22, 10);
    expect(nextIdleCut(0.2, 0.05, 0.6)).toBeCloseTo(0.18, 10);
    expect(nextIdleCut(0.59, 1, 0.6)).toBe(0.6);
  });
});
