import { describe, expect, it } from 'vitest';
import { parseSwarmArgs } from '../src/swarm/cli-options.js';
import { joinOffsetsMs, p2pOffViewers, scenarioByName } from '../src/swarm/scenarios.js';

describe('swarm scenarios', () => {
  it('live viewers join one a second, VOD viewers over the first third of the run', () => {
    expect(joinOffsetsMs(scenarioByName('live-normal'), 4, 60)).toEqual([0, 1000, 2000, 3000]);
    expect(joinOffsetsMs(scenarioByName('vod'), 4, 60)).toEqual([0, 6667, 13333, 20000]);
  });

  it('live-high-half turns P2P off for every other viewer', () => {
    expect([...p2pOffViewers(scenarioByName('live-high-half'), 8)].sort()).toEqual([1, 3, 5, 7]);
    expect(p2pOffViewers(scenarioByName('live-normal'), 8).size).toBe(0);
  });

  it('presets the player latency per scenario', () => {
    expect(scenarioByName('live-low').liveSyncDurationCount).toBe(2);
    expect(scenarioByName('live-normal').liveSyncDurationCount).toBe(5);
    expect(scenarioByName('live-high').liveSyncDurationCount).toBe(10);
    expect(scenarioByName('churn').churn).toEqual({ everyS: 10, keep: 2 });
    expect(() => scenarioByName('live-nope')).toThrow(/unknown scenario "live-nope"/);
  });

  it('parses the CLI: the baseline runs first, --compare keeps the given engines', () => {
    const options = parseSwarmArgs(['--scenario', 'vod', '--peers', '8', '--duration', '120', '--engine', 'shoal', '--out', 'out/run1']);
    expect(options).toMatchObject({ scenario: 'vod', peers: 8, durationS: 120, engines: ['http', 'shoal'], outDir: 'out/run1' });
    expect(parseSwarmArgs(['--compare', 'shoal,http,p2p-media-loader'])).toMatchObject({ engines: ['http', 'shoal', 'p2p-media-loader'] });
    expect(parseSwarmArgs(['--engine', 'p2p-media-loader', '--no-baseline'])).toMatchObject({ engines: ['p2p-media-loader'] });
    expect(() => parseSwarmArgs(['--engine', 'hola'])).toThrow(/unknown engine "hola"/);
    expect(() => parseSwarmArgs(['--peers', '2.5'])).toThrow(/--peers must be a whole number/);
    expect(() => parseSwarmArgs(['--stream', 'ftp://x'])).toThrow(/--stream must be an http/);
  });
});
