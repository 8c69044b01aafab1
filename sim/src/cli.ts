// `npm run simulate -- --scenario live-normal --peers 1000 --network unlimited --minutes 10 --seed 1 --out out/sim1`
// Parses the simulator's arguments, runs the HTTP-only baseline and the Shoal run (or one of
// them), writes report.json + report.html (the browser swarm's format) and prints the terminal
// table. The simulator only simulates Shoal; unlike the swarm runner it has no --engine.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { EngineOptionsInput } from '@shoal/core';
import { renderReportHtml } from '@shoal/e2e/swarm/report-html';
import { renderReportTable } from '@shoal/e2e/swarm/report-table';
import { describeUplinkAccount } from '@shoal/e2e/swarm/uplink-account';
import { buildSimReport, simRunReport, type SimReport, type SimRunReport } from './sim-report.js';
import { networkProfiles } from '@shoal/e2e/network-profiles';
import { scenarioNames } from './sim-scenarios.js';
import { DEFAULT_SIMULATION, runSimulation, type SimulationConfig } from './simulation.js';
import { ProgressMeter, type ProgressMeterOptions } from './progress.js';

export const usage = `usage: npm run simulate -- [options]

  --scenario NAME       ${scenarioNames.join(' | ')} (default live-normal)
  --peers N             concurrent viewers (default 100)
  --network NAME        ${Object.keys(networkProfiles).join(' | ')} (default unlimited)
${Object.values(networkProfiles).map((profile) => `                          ${profile.name}: ${profile.description}`).join('\n')}
                        (the browser swarm's --network profiles: e2e/src/network-profiles.ts)
  --minutes M           simulated minutes (default 10)
  --join-spread S       viewers join over S seconds (default: the scenario's, 30; VOD 60); the
                        browser swarm joins one a second: --join-spread 7 for 8 viewers
  --no-wire-overhead    model payload only: no SCTP/DTLS/UDP/IP headers, acknowledgements or the
                        HTTP downloads' TCP acknowledgements on the uplinks (the model before
                        2026-12-02; by default they are charged as the browser swarm measured them)
  --seed N              random seed: the same seed gives the same report (default 1)
  --baseline-only       run the HTTP-only baseline alone (every viewer over HTTP, no Shoal run)
  --no-baseline         run Shoal alone, without the HTTP-only baseline run before it
  --bitrate-kbps N      stream bitrate (default ${DEFAULT_SIMULATION.bitrateKbps}, the sample stream's 360p)
  --engine-options JSON options for every P2P viewer's engine, e.g. '{"seedersPerSegment":2}'
  --out DIR             write report.json and report.html there
  --quiet               no progress lines (by default a run prints, at most every 5 s, to stderr:
                        simulated time, events per second, and an estimate of the wall time left)
`;

export interface SimCliOptions {
  config: Omit<SimulationConfig, 'setup' | 'onProgress' | 'httpOnly'>;
  /** The runs, in order: the HTTP-only baseline (`http`, first) and Shoal (`shoal`), or one of them. */
  runs: ('http' | 'shoal')[];
  outDir: string | undefined;
  /** No progress lines. */
  quiet: boolean;
}

/** The answer to --engine, which picked shoal or http before issue 10. */
const engineRemoved = '--engine was removed: the simulator always runs Shoal; use --baseline-only for HTTP alone';

const positive = (name: string, text: string | undefined, fallback: number, integer = false) => {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new Error(`--${name} must be a positive ${integer ? 'integer' : 'number'}, got "${text}"`);
  }
  return value;
};

export function parseSimArgs(argv: string[]): SimCliOptions | 'help' {
  // Checked before parseArgs, whose own message for an unknown or valueless option names no replacement.
  if (argv.some((arg) => arg === '--engine' || arg.startsWith('--engine='))) throw new Error(engineRemoved);
  const { values } = parseArgs({
    args: argv,
    options: {
      scenario: { type: 'string', default: 'live-normal' },
      peers: { type: 'string' },
      network: { type: 'string', default: 'unlimited' },
      minutes: { type: 'string' },
      seed: { type: 'string' },
      'baseline-only': { type: 'boolean', default: false },
      'no-baseline': { type: 'boolean', default: false },
      'bitrate-kbps': { type: 'string' },
      'engine-options': { type: 'string' },
      'join-spread': { type: 'string' },
      'no-wire-overhead': { type: 'boolean', default: false },
      out: { type: 'string' },
      quiet: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) return 'help';
  if (!scenarioNames.includes(values.scenario!)) throw new Error(`unknown scenario "${values.scenario}"; one of: ${scenarioNames.join(', ')}`);
  if (!networkProfiles[values.network!]) throw new Error(`unknown network "${values.network}"; one of: ${Object.keys(networkProfiles).join(', ')}`);
  if (values['baseline-only'] && values['no-baseline']) throw new Error('give either --baseline-only (HTTP alone) or --no-baseline (Shoal alone), not both');
  let engineOptions: EngineOptionsInput = {};
  if (values['engine-options'] !== undefined) {
    try {
      engineOptions = JSON.parse(values['engine-options']) as EngineOptionsInput;
    } catch (error) {
      throw new Error(`--engine-options must be a JSON object: ${(error as Error).message}`);
    }
  }
  const seedText = values.seed ?? '1';
  const seed = Number(seedText);
  if (!Number.isInteger(seed) || seed < 0) throw new Error(`--seed must be a non-negative integer, got "${seedText}"`);
  return {
    config: {
      ...DEFAULT_SIMULATION,
      scenario: values.scenario!,
      peers: positive('peers', values.peers, 100, true),
      network: values.network!,
      durationS: Math.round(positive('minutes', values.minutes, 10) * 60),
      seed,
      bitrateKbps: positive('bitrate-kbps', values['bitrate-kbps'], DEFAULT_SIMULATION.bitrateKbps),
      engineOptions,
      wireOverhead: values['no-wire-overhead'] ? undefined : DEFAULT_SIMULATION.wireOverhead,
      ...(values['join-spread'] === undefined ? {} : { joinSpreadS: positive('join-spread', values['join-spread'], 30) }),
    },
    runs: values['baseline-only'] ? ['http'] : values['no-baseline'] ? ['shoal'] : ['http', 'shoal'],
    outDir: values.out,
    quiet: values.quiet!,
  };
}

/**
 * Runs what was asked (the HTTP-only baseline, Shoal, or both); writes and returns the report.
 * `log` gets the report's lines, `progress` the progress lines (unless options.quiet), at most
 * every 5 s of wall time unless `meterOptions` say otherwise.
 */
export async function runSimCli(
  options: SimCliOptions,
  command: string,
  log: (line: string) => void,
  progress: (line: string) => void = () => {},
  meterOptions: Partial<ProgressMeterOptions> = {},
): Promise<SimReport> {
  const runs: SimRunReport[] = [];
  for (const [index, name] of options.runs.entries()) {
    const { config } = options;
    const httpOnly = name === 'http';
    log(`simulating ${config.scenario}: ${config.peers} viewers, ${config.network} network, ${config.durationS / 60} min, ${httpOnly ? 'HTTP-only baseline' : 'Shoal'}, seed ${config.seed}`);
    const label = `${httpOnly ? 'HTTP-only baseline' : 'Shoal'}${options.runs.length > 1 ? ` (run ${index + 1} of ${options.runs.length})` : ''}`;
    const meter = options.quiet ? undefined : new ProgressMeter(label, progress, meterOptions);
    const result = await runSimulation({ ...config, httpOnly, ...(meter ? { onProgress: (step) => meter.update(step) } : {}) });
    runs.push(simRunReport(result));
  }
  const report = buildSimReport(runs, command);
  if (options.outDir) {
    await mkdir(options.outDir, { recursive: true });
    await writeFile(join(options.outDir, 'report.json'), `${JSON.stringify(report, null, 2)}\n`);
    await writeFile(join(options.outDir, 'report.html'), renderReportHtml(report));
  }
  log('');
  log(renderReportTable(report));
  const account = runs.find((run) => run.engine === 'shoal')?.uplinkAccount;
  if (account) log(describeUplinkAccount(account));
  const sim = report.simulator;
  const overhead = runs.find((run) => run.engine === 'shoal')?.simulator.wireOverhead;
  if (overhead) log(`  besides payload, per viewer over the run (the model of sim/src/kit/wire-overhead.ts): SCTP/DTLS/ICE overhead ${overhead.dataChannelKbitPerS} kbit/s, TCP acknowledgements to the origin ${overhead.tcpAckKbitPerS} kbit/s`);
  log(
    `simulator: ${sim.events.toLocaleString('en')} events in ${(sim.wallMs / 1000).toFixed(1)} s wall; ` +
      `P2P viewers' own offload ${sim.p2pGroup.offload === null ? '–' : `${(sim.p2pGroup.offload * 100).toFixed(1)}%`} ` +
      `(ideal ${(sim.p2pGroup.ideal * 100).toFixed(1)}%, capacity bound ${(sim.p2pGroup.capacityBound * 100).toFixed(1)}%)`,
  );
  return report;
}
