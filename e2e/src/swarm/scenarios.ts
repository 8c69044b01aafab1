// The reference scenarios of DESIGN.md ("Measuring"), each a named preset of latency target,
// join pattern, P2P-off fraction and churn.

export type StreamKind = 'live' | 'vod';

export interface Scenario {
  name: string;
  description: string;
  stream: StreamKind;
  /** hls.js liveSyncDurationCount: segments behind the live edge. */
  liveSyncDurationCount: number;
  /** hls.js maxBufferLength (and maxMaxBufferLength), s; identical for every engine compared. */
  maxBufferLength: number;
  /** Segments in the live playlist window (origin). */
  liveWindowSize: number;
  /** Joins are spread evenly over this fraction of the run (0: all at once, one per joinGapMs). */
  joinSpreadFraction: number;
  /** Minimum gap between two joins, ms. */
  joinGapMs: number;
  /** Fraction of viewers that play with P2P off (hls.js alone). */
  p2pOffFraction: number;
  /**
   * Churn: every `everyS` seconds after all have joined, the oldest viewer leaves and a new one
   * joins; the first `keep` viewers never leave.
   */
  churn: { everyS: number; keep: number } | null;
}

const live = {
  stream: 'live',
  liveWindowSize: 10,
  joinSpreadFraction: 0,
  joinGapMs: 1_000,
  p2pOffFraction: 0,
  churn: null,
} as const;

export const scenarios: Record<string, Scenario> = {
  'live-normal': {
    ...live,
    name: 'live-normal',
    description: 'live, player 5 segments behind the edge',
    liveSyncDurationCount: 5,
    maxBufferLength: 10,
  },
  'live-high': {
    ...live,
    name: 'live-high',
    description: 'live, player 10 segments behind the edge',
    liveSyncDurationCount: 10,
    maxBufferLength: 20,
    liveWindowSize: 15,
  },
  'live-high-half': {
    ...live,
    name: 'live-high-half',
    description: 'live-high with half the viewers P2P off',
    liveSyncDurationCount: 10,
    maxBufferLength: 20,
    liveWindowSize: 15,
    p2pOffFraction: 0.5,
  },
  'live-low': {
    ...live,
    name: 'live-low',
    description: 'live, player 2 segments behind the edge',
    liveSyncDurationCount: 2,
    maxBufferLength: 4,
  },
  vod: {
    ...live,
    name: 'vod',
    description: 'VOD, joins spread over the first third of the run',
    stream: 'vod',
    liveSyncDurationCount: 5,
    maxBufferLength: 20,
    joinSpreadFraction: 1 / 3,
  },
  churn: {
    ...live,
    name: 'churn',
    description: 'live-normal with one viewer leaving and a new one joining every 10 s; the first two watch throughout',
    liveSyncDurationCount: 5,
    maxBufferLength: 10,
    churn: { everyS: 10, keep: 2 },
  },
};

export function scenarioByName(name: string): Scenario {
  const scenario = scenarios[name];
  if (!scenario) throw new Error(`unknown scenario "${name}"; one of: ${Object.keys(scenarios).join(', ')}`);
  return scenario;
}

/** Join offsets (ms from the start of the run) of the first `peers` viewers. */
export function joinOffsetsMs(scenario: Scenario, peers: number, durationS: number): number[] {
  const spreadMs = scenario.joinSpreadFraction * durationS * 1000;
  const stepMs = peers > 1 ? Math.max(scenario.joinGapMs, spreadMs / (peers - 1)) : 0;
  return Array.from({ length: peers }, (_, index) => Math.round(index * stepMs));
}

/** Which viewers (by index) play with P2P off: every other one for 0.5, spread evenly. */
export function p2pOffViewers(scenario: Scenario, peers: number): Set<number> {
  const off = new Set<number>();
  const count = Math.round(scenario.p2pOffFraction * peers);
  for (let k = 0; k < count; k += 1) off.add(Math.floor(((k + 0.5) * peers) / count));
  return off;
}
