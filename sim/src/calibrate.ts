// `npm run calibrate -- --network realistic,critical --browser-runs 3 --seeds 1,2,3`
// The simulator against browsers on the same profile: the browser swarm (e2e/bin/swarm.js, run as
// a user runs it, or reports given with --browser-reports) and the simulator with the same
// scenario, viewers, joins (one a second), duration and rendition (the sample stream's 684 kbit/s,
// hls.js pinned to it), and one table per profile: offload, stalls, origin fetches per segment,
// and what the uplinks carried by class, per viewer.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { networkProfiles } from '@shoal/e2e/network-profiles';
import { perViewerKbitPerS, simRunReport } from './sim-report.js';
import { DEFAULT_SIMULATION, runSimulation } from './simulation.js';

export const calibrateUsage = `usage: npm run calibrate -- [options]

  --network A,B,...     profiles (default realistic,critical): ${Object.keys(networkProfiles).join(', ')}
  --scenario NAME       default live-normal
  --peers N             viewers (default 8)
  --duration S          seconds per run (default 90)
  --browser-runs N      browser swarm runs per profile (default 1; each runs Shoal and HTTP alone)
  --browser-reports F   instead of running browsers, their report.json files (comma-separated;
                        each names its profile): calibrate against runs already made
  --seeds 1,2,3         simulator seeds (default 1,2,3)
  --out DIR             where the browser runs' reports go (default out/calibrate-<time>)
`;

/** One side's figures for one run: offload and stalls of Shoal, stalls of HTTP alone, and the uplink per viewer by class, kbit/s. */
export interface CalibrationRow {
  offload: number | null;
  stalls: number;
  httpStalls: number | null;
  originFetchesPerSegment: number | null;
  uplinkKbitPerS: { payload: number; control: number; overhead: number; originTcp: number } | null;
}

const UPLINK_CLASSES = ['payload', 'control', 'overhead', 'originTcp'] as const;

interface BrowserRunReport {
  engine: string;
  offload: number | null;
  stalls: { count: number };
  originFetchesPerSegment: number | null;
  network?: { profile?: string; name?: string } | string;
  uplinkClasses?: { viewers: { run: { kbitPerS: { payload: number; control: number; overhead: number; origin: number } } }[] };
}

/** A browser swarm report.json's Shoal run, as a row (the uplink classes over each viewer's whole run). */
export function browserRow(report: { runs: BrowserRunReport[] }): CalibrationRow {
  const shoal = report.runs.find((run) => run.engine === 'shoal');
  if (!shoal) throw new Error('the report has no Shoal run');
  const http = report.runs.find((run) => run.engine === 'http');
  const viewers = shoal.uplinkClasses?.viewers ?? [];
  const mean = (pick: (rates: { payload: number; control: number; overhead: number; origin: number }) => number) =>
    viewers.reduce((sum, viewer) => sum + pick(viewer.run.kbitPerS), 0) / viewers.length;
  return {
    offload: shoal.offload,
    stalls: shoal.stalls.count,
    httpStalls: http?.stalls.count ?? null,
    originFetchesPerSegment: shoal.originFetchesPerSegment,
    uplinkKbitPerS: viewers.length === 0 ? null : { payload: mean((r) => r.payload), control: mean((r) => r.control), overhead: mean((r) => r.overhead), originTcp: mean((r) => r.origin) },
  };
}

/** The simulator's row for one seed: Shoal, and HTTP alone for its stalls. */
export async function simRow(network: string, scenario: string, peers: number, durationS: number, seed: number): Promise<CalibrationRow> {
  const base = { ...DEFAULT_SIMULATION, scenario, peers, network, durationS, seed, joinSpreadS: Math.max(0, peers - 1) };
  const http = simRunReport(await runSimulation({ ...base, httpOnly: true }));
  const result = await runSimulation(base);
  const shoal = simRunReport(result);
  const kbit = (pick: (index: number) => number) => perViewerKbitPerS(result, pick);
  return {
    offload: shoal.offload,
    stalls: shoal.stalls.count,
    httpStalls: http.stalls.count,
    originFetchesPerSegment: shoal.originFetchesPerSegment,
    uplinkKbitPerS: {
      payload: kbit((i) => result.viewerStats[i]!.uploadBytes),
      control: kbit((i) => result.viewerStats[i]!.controlBytes),
      overhead: kbit((i) => result.wireOverhead[i]!.dataChannelBytes),
      originTcp: kbit((i) => result.wireOverhead[i]!.tcpAckBytes),
    },
  };
}

function meanOf(values: (number | null)[]): number | null {
  const known = values.filter((value): value is number => value !== null);
  return known.length === 0 ? null : known.reduce((sum, value) => sum + value, 0) / known.length;
}

/**
 * The table for one profile: each figure's browser mean (and its runs), the simulator's mean (and
 * its seeds), and whether they agree: offload within ±5 points, each uplink class within ±15%
 * (of the browsers'), Shoal's stalls no more than HTTP alone's on either side.
 */
export function calibrationTable(network: string, browsers: CalibrationRow[], sims: CalibrationRow[]): string {
  const lines = [`${network}: ${browsers.length} browser run(s), ${sims.length} simulator seed(s)`, `  figure                      browsers (runs)                   simulator (seeds)                 gap`];
  const row = (name: string, pick: (row: CalibrationRow) => number | null, format: (value: number) => string, gap: (b: number, s: number) => string) => {
    const b = browsers.map(pick);
    const s = sims.map(pick);
    const bMean = meanOf(b);
    const sMean = meanOf(s);
    const list = (values: (number | null)[]) => values.map((value) => (value === null ? '–' : format(value))).join(', ');
    const cell = (mean: number | null, values: (number | null)[]) => `${mean === null ? '–' : format(mean)} (${list(values)})`.padEnd(34);
    lines.push(`  ${name.padEnd(28)}${cell(bMean, b)}${cell(sMean, s)}${bMean === null || sMean === null ? '–' : gap(bMean, sMean)}`);
  };
  const percent = (value: number) => `${(value * 100).toFixed(1)}%`;
  row('offload', (r) => r.offload, percent, (b, s) => `${((s - b) * 100).toFixed(1)} points ${Math.abs(s - b) <= 0.05 ? 'ok' : 'OFF (±5)'}`);
  row('stalls: Shoal', (r) => r.stalls, (v) => v.toFixed(1), () => '');
  row('stalls: HTTP alone', (r) => r.httpStalls, (v) => v.toFixed(1), () => '');
  row('origin fetches / segment', (r) => r.originFetchesPerSegment, (v) => v.toFixed(2), (b, s) => `${(s - b).toFixed(2)}`);
  for (const kind of UPLINK_CLASSES) {
    row(`uplink ${kind}, kbit/s`, (r) => r.uplinkKbitPerS?.[kind] ?? null, (v) => v.toFixed(1), (b, s) => {
      const relative = b > 0 ? (s - b) / b : 0;
      return `${(relative * 100).toFixed(0)}% ${Math.abs(relative) <= 0.15 ? 'ok' : 'OFF (±15%)'}`;
    });
  }
  const stallsOk = (rows: CalibrationRow[]) => rows.every((r) => r.httpStalls === null || r.stalls <= r.httpStalls);
  lines.push(`  stalls no more than HTTP alone's: browsers ${stallsOk(browsers) ? 'yes' : 'NO'}, simulator ${stallsOk(sims) ? 'yes' : 'NO'}`);
  return lines.join('\n');
}

export interface CalibrateOptions {
  networks: string[];
  scenario: string;
  peers: number;
  durationS: number;
  browserRuns: number;
  browserReports: string[];
  seeds: number[];
  outDir: string;
}

export function parseCalibrateArgs(argv: string[]): CalibrateOptions | 'help' {
  const { values } = parseArgs({
    args: argv,
    options: {
      network: { type: 'string', default: 'realistic,critical' },
      scenario: { type: 'string', default: 'live-normal' },
      peers: { type: 'string', default: '8' },
      duration: { type: 'string', default: '90' },
      'browser-runs': { type: 'string', default: '1' },
      'browser-reports': { type: 'string' },
      seeds: { type: 'string', default: '1,2,3' },
      out: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) return 'help';
  const whole = (name: string, text: string, min: number) => {
    const value = Number(text);
    if (!Number.isInteger(value) || value < min) throw new Error(`--${name} must be an integer of at least ${min}, got "${text}"`);
    return value;
  };
  const networks = values.network!.split(',').filter(Boolean);
  for (const network of networks) if (!networkProfiles[network]) throw new Error(`unknown network "${network}"; one of: ${Object.keys(networkProfiles).join(', ')}`);
  const browserReports = values['browser-reports']?.split(',').filter(Boolean) ?? [];
  for (const file of browserReports) if (!existsSync(file)) throw new Error(`--browser-reports: ${file} does not exist`);
  return {
    networks,
    scenario: values.scenario!,
    peers: whole('peers', values.peers!, 2),
    durationS: whole('duration', values.duration!, 10),
    browserRuns: whole('browser-runs', values['browser-runs']!, 0),
    browserReports,
    seeds: values.seeds!.split(',').map((seed) => whole('seeds', seed, 0)),
    outDir: values.out ?? join('out', `calibrate-${new Date().toISOString().replace(/[:.]/g, '-')}`),
  };
}

/** The profile a browser report ran on. */
function profileOf(report: { runs: BrowserRunReport[] }): string | undefined {
  const network = report.runs[0]?.network;
  return typeof network === 'string' ? network : (network?.profile ?? network?.name);
}

/** Runs (or reads) the browser swarms and runs the simulator, profile by profile; `log` gets each table. */
export async function runCalibration(options: CalibrateOptions, swarmBin: string, log: (line: string) => void): Promise<void> {
  const given = options.browserReports.map((file) => JSON.parse(readFileSync(file, 'utf8')) as { runs: BrowserRunReport[] });
  for (const network of options.networks) {
    const browsers = given.filter((report) => profileOf(report) === network).map(browserRow);
    for (let run = 0; options.browserReports.length === 0 && run < options.browserRuns; run++) {
      const out = join(options.outDir, `browser-${network}-${run + 1}`);
      mkdirSync(out, { recursive: true });
      const args = ['--compare', 'shoal,http', '--scenario', options.scenario, '--peers', String(options.peers), '--network', network, '--level', '1', '--duration', String(options.durationS), '--out', out];
      log(`browsers, ${network}, run ${run + 1}/${options.browserRuns}: npm run swarm -- ${args.join(' ')}`);
      const child = spawnSync(process.execPath, [swarmBin, ...args], { stdio: ['ignore', 'ignore', 'inherit'] });
      if (child.status !== 0) throw new Error(`the browser swarm failed (exit ${child.status}); its report, if any: ${out}`);
      browsers.push(browserRow(JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')) as { runs: BrowserRunReport[] }));
    }
    const sims: CalibrationRow[] = [];
    for (const seed of options.seeds) sims.push(await simRow(network, options.scenario, options.peers, options.durationS, seed));
    log(calibrationTable(network, browsers, sims));
  }
}
