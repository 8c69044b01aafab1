// The simulator's scenarios and network profiles. Player settings (sync distance, buffer length,
// playlist window, P2P-off fraction) come from the browser swarm's presets (../swarm/scenarios.ts),
// so both tools play the same scenario; only the crowd is scaled: joins are spread over a fixed
// time rather than one per second, and churn replaces a fraction of viewers rather than one.
import { scenarioByName, scenarios as swarmScenarios, type Scenario } from '../swarm/scenarios.js';
import type { LinkCapacity } from './flow-network.js';
import type { Prng } from './prng.js';

export interface SimScenario {
  swarm: Scenario;
  /** Viewers join at evenly spread times over this many seconds (with jitter). */
  joinSpreadS: number;
  /** Every `everyS`, this fraction of the viewers (at least one) leaves and as many new ones join. */
  churn: { everyS: number; fraction: number } | null;
}

export const scenarioNames = Object.keys(swarmScenarios);

export function simScenario(name: string): SimScenario {
  const swarm = scenarioByName(name);
  return {
    swarm,
    // DESIGN.md: VOD viewers join over the first minute; live viewers arrive as a crowd in 30 s.
    joinSpreadS: swarm.stream === 'vod' ? 60 : 30,
    churn: swarm.churn ? { everyS: swarm.churn.everyS, fraction: 0.01 } : null,
  };
}

const MBIT = 1_000_000 / 8;

export interface NetworkProfile {
  name: string;
  description: string;
  /** Draws one viewer's access link. */
  draw(prng: Prng): LinkCapacity;
}

const latency = (prng: Prng, min: number, max: number) => Math.round(prng.between(min, max));
/**
 * A home router's uplink buffer, as queueing delay when full. Calibrated against issue 17's
 * browser measurement (8 viewers, tc tbf uplinks at 0.44x and 1.2x the stream): with 600 ms the
 * simulator's pre-fix engine stalls about as long as real Chromium did there.
 */
const HOME_UPLINK_QUEUE_MS = 600;

export const networkProfiles: Record<string, NetworkProfile> = {
  unlimited: {
    name: 'unlimited',
    description: 'no bandwidth limit (as in PeerTube 2023, where WebRTC was not throttled); 5-40 ms access latency',
    draw: (prng) => ({ upBytesPerS: Infinity, downBytesPerS: Infinity, latencyMs: latency(prng, 5, 40) }),
  },
  realistic: {
    name: 'realistic',
    description: '2 Mbit/s down, 300 kbit/s up per viewer (PeerTube\'s HTTP throttle); 10-60 ms',
    draw: (prng) => ({ upBytesPerS: 0.3 * MBIT, downBytesPerS: 2 * MBIT, latencyMs: latency(prng, 10, 60), uplinkQueueMs: HOME_UPLINK_QUEUE_MS }),
  },
  mixed: {
    name: 'mixed',
    description: '20 Mbit/s down; uplinks: 25% each of 0.3, 1, 3 and 10 Mbit/s; 10-80 ms',
    draw: (prng) => {
      const uplinks = [0.3, 1, 3, 10];
      return { upBytesPerS: uplinks[prng.index(uplinks.length)]! * MBIT, downBytesPerS: 20 * MBIT, latencyMs: latency(prng, 10, 80), uplinkQueueMs: HOME_UPLINK_QUEUE_MS };
    },
  },
};

export function networkProfile(name: string): NetworkProfile {
  const profile = networkProfiles[name];
  if (!profile) throw new Error(`unknown network profile "${name}"; one of: ${Object.keys(networkProfiles).join(', ')}`);
  return profile;
}
