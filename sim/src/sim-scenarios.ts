// The simulator's scenarios and network profiles. Player settings (sync distance, buffer length,
// playlist window, P2P-off fraction) come from the browser swarm's presets (../swarm/scenarios.ts),
// so both tools play the same scenario; only the crowd is scaled: joins are spread over a fixed
// time rather than one per second, and churn replaces a fraction of viewers rather than one.
// Network profiles are shared with the browser swarm (../network-profiles.ts).
import { scenarioByName, scenarios as swarmScenarios, type Scenario } from '@shoal/e2e/swarm/scenarios';
import { viewerLink, type NetworkProfile } from '@shoal/e2e/network-profiles';
import type { LinkCapacity, Prng } from './kit.js';

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

/** Viewer `index`'s access link in the simulator: the shared profile table, latency drawn in its range. */
export function simLink(profile: NetworkProfile, index: number, bitrateBitsPerS: number, prng: Prng): LinkCapacity {
  const link = viewerLink(profile, index, bitrateBitsPerS);
  const [minMs, maxMs] = profile.latencyMs;
  return {
    upBytesPerS: link.upBitsPerS / 8,
    downBytesPerS: link.downBitsPerS / 8,
    latencyMs: Math.round(prng.between(minMs, maxMs)),
    uplinkQueueMs: link.uplinkQueueMs,
  };
}
