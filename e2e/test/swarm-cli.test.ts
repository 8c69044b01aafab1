import { describe, expect, it } from 'vitest';
// The help text is plain JavaScript (it prints before any build): it must name what the CLI accepts.
import { usage } from '../bin/swarm-usage.js';
import { networkProfiles } from '../src/network-profiles.js';
import { parseSwarmArgs, swarmCliOptions } from '../src/swarm/cli-options.js';
import type { RunReport } from '../src/swarm/report-schema.js';
import { natModes } from '../src/swarm/stage.js';
import { scenarios } from '../src/swarm/scenarios.js';
import { checkThresholds, parseThreshold, thresholdMetrics } from '../src/swarm/thresholds.js';
import { browserNames } from '../src/swarm/viewer-browsers.js';
import { engineNames } from '../src/swarm/viewer-snapshot.js';
import { faultNames, hostileBehaviours } from '../src/swarm/faults.js';

describe('swarm CLI', () => {
  it('has a help text that names every option, scenario, engine, network, NAT mode and threshold figure', () => {
    for (const name of Object.keys(swarmCliOptions)) expect(usage, name).toContain(`--${name}`);
    for (const name of [...faultNames, ...hostileBehaviours, ...Object.keys(scenarios), ...engineNames, ...Object.keys(networkProfiles), ...natModes, ...browserNames, ...Object.keys(thresholdMetrics)]) {
      expect(usage, name).toContain(name);
    }
  });

  it('parses faults, and names the one it does not know', () => {
    expect(parseSwarmArgs(['--fault', 'tracker-outage,hostile-peers', '--outage', '10', '--hostile', 'silent,trickle'])).toMatchObject({
      faults: { faults: ['tracker-outage', 'hostile-peers'], outageS: 10, hostile: ['silent', 'trickle'] },
    });
    expect(() => parseSwarmArgs(['--fault', 'tracker-outgae'])).toThrow('unknown --fault "tracker-outgae"');
    expect(() => parseSwarmArgs(['--fault', 'hostile-peers', '--hostile', 'rude'])).toThrow('unknown --hostile "rude"');
    expect(() => parseSwarmArgs(['--outage', '10'])).toThrow('--outage and --hostile go with --fault');
  });

  it('parses thresholds, and names the figure or engine it does not know', () => {
    expect(parseSwarmArgs(['--assert', 'offload>=0.6', '--assert', 'shoal:stalls<=baseline'])).toMatchObject({
      thresholds: [
        { engine: null, metric: 'offload', operator: '>=', bound: 0.6 },
        { engine: 'shoal', metric: 'stalls', operator: '<=', bound: 'baseline' },
      ],
    });
    expect(() => parseThreshold('offlaod>=0.6')).toThrow('unknown figure "offlaod"');
    expect(() => parseThreshold('webtorrent:offload>=0.6')).toThrow('unknown engine "webtorrent"');
    expect(() => parseThreshold('offload=0.6')).toThrow('is not FIGURE OP VALUE');
  });

  it('checks thresholds on every run but the baseline, against numbers or the baseline\'s figure', () => {
    const run = (engine: RunReport['engine'], offload: number | null, stalls: number) =>
      ({ engine, offload, stalls: { count: stalls, seconds: stalls, secondsPerViewerMinute: 0 } }) as unknown as RunReport;
    const runs = [run('http', 0, 1), run('shoal', 0.62, 2), run('p2p-media-loader', 0.3, 0)];
    const results = checkThresholds([parseThreshold('offload>=0.6'), parseThreshold('stalls<=baseline'), parseThreshold('shoal:offload>0.7')], runs);
    expect(results.map((result) => [result.engine, result.threshold, result.pass])).toEqual([
      ['shoal', 'offload>=0.6', true],
      ['p2p-media-loader', 'offload>=0.6', false],
      ['shoal', 'stalls<=baseline', false],
      ['p2p-media-loader', 'stalls<=baseline', true],
      ['shoal', 'shoal:offload>0.7', false],
    ]);
    const noBaseline = checkThresholds([parseThreshold('stalls<=baseline')], [run('shoal', null, 0)]);
    expect(noBaseline).toEqual([{ threshold: 'stalls<=baseline', engine: 'shoal', actual: 0, bound: null, pass: false, reason: 'no HTTP-only baseline (or it lacks the figure)' }]);
    expect(checkThresholds([parseThreshold('offload>=0.5')], [run('shoal', null, 0)])[0]).toMatchObject({ pass: false, reason: 'the figure is unavailable' });
  });
});
