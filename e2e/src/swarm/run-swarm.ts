// The swarm runner: for each engine, a fresh origin and tracker, N viewers (Chromium, or the mix
// asked for) joining as the scenario says, sampling while they play, then the report. Without a
// network profile: all on loopback, a Chromium context or a Firefox of its own each. With one
// (--network): a browser per viewer in its own network namespace, its link shaped (viewer-networks.ts).
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { networkProfile } from '../network-profiles.js';
import { startStaticServer, type StaticServer } from '../static-server.js';
import { runEngine } from './engine-run.js';
import { FAULT_WARMUP_S, faultsDurationS } from './faults.js';
import { buildSwarmReport, summarizeRun } from './report.js';
import { REPORT_SCHEMA_VERSION, type RunReport, type SwarmReport } from './report-schema.js';
import { renderReportHtml } from './report-html.js';
import { renderReportTable } from './report-table.js';
import { scenarioByName } from './scenarios.js';
import { closeStage, hubHost, openStage, shoalCommit, viewerPageMounts, type Stage } from './stage.js';
import { NO_VIEWER_PLAYING } from './start-watch.js';
import { checkExternalStream } from './stream-preflight.js';
import { checkThresholds, renderThresholdLines } from './thresholds.js';
import { mixSize } from './viewer-browsers.js';
import type { SwarmOptions } from './swarm-options.js';

export type { SwarmOptions } from './swarm-options.js';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const minutes = (ms: number) => {
  const seconds = Math.max(0, Math.round(ms / 1000));
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}`;
};

/** The counts the options give, checked before anything starts. */
function checkCounts(options: SwarmOptions): void {
  if (!Number.isInteger(options.peers) || options.peers < 1) throw new Error(`peers must be a positive integer, got ${options.peers}`);
  if (!(options.durationS > 0)) throw new Error(`durationS must be positive, got ${options.durationS}`);
  if (options.engines.length === 0) throw new Error('engines must name at least one engine');
  if (options.browsers && mixSize(options.browsers) !== options.peers) {
    throw new Error(`the browser mix names ${mixSize(options.browsers)} viewers but peers is ${options.peers}`);
  }
}

/** report.json and report.html in `outDir`, when there is one. */
async function writeReport(outDir: string | undefined, report: object, html: () => string): Promise<void> {
  if (!outDir) return;
  await mkdir(outDir, { recursive: true });
  await writeFile(join(outDir, 'report.json'), `${JSON.stringify(report, null, 2)}\n`);
  await writeFile(join(outDir, 'report.html'), html());
}

/** Runs every engine of the comparison and returns (and, with outDir, writes) the report. */
export async function runSwarm(options: SwarmOptions): Promise<SwarmReport> {
  const requested = typeof options.scenario === 'string' ? scenarioByName(options.scenario) : options.scenario;
  checkCounts(options);
  const log = options.log ?? (() => {});
  // An external stream is checked before any browser starts, and its kind picks or checks the scenario.
  const scenario = options.streamUrl ? await checkExternalStream(options.streamUrl, requested, log) : (requested ?? scenarioByName('live-normal'));
  const faultsNeedS = faultsDurationS(scenario, options);
  if (faultsNeedS > options.durationS) {
    throw new Error(`--fault ${options.faults!.faults.join(',')} needs a run of at least ${Math.ceil(faultsNeedS)} s (joins, ${FAULT_WARMUP_S} s warm-up, the phases, 5 s after): got --duration ${options.durationS}`);
  }
  const networkName = options.network ?? (options.nat ? 'unlimited' : undefined);
  const profile = networkName === undefined ? null : networkProfile(networkName);
  if (profile && (options.streamUrl || options.trackerUrl)) {
    throw new Error('a network profile needs the run\'s own origin and tracker (on the viewers\' test network): drop --stream/--tracker');
  }
  let stage: Stage | null = null;
  let pages: StaticServer | undefined;
  try {
    stage = await openStage(profile, options.level, options.nat ?? null, log);
    pages = await startStaticServer({ mounts: viewerPageMounts(), host: hubHost(stage) });
    // A run in which no viewer starts stops the comparison as a signal would (./start-watch.ts).
    const noStart = new AbortController();
    const runOptions = { ...options, signal: options.signal ? AbortSignal.any([options.signal, noStart.signal]) : noStart.signal };
    const runs: RunReport[] = [];
    const comparisonStartMs = Date.now();
    // Seconds a run takes beyond its duration (start-up, collection): measured once one has run.
    let overheadS = 15 + options.peers * (stage.kind === 'shaped' ? 2 : 0.5);
    const aborted = () => (runOptions.signal.aborted ? String(runOptions.signal.reason ?? 'interrupted') : null);
    for (const [index, engine] of options.engines.entries()) {
      if (aborted()) break;
      if (index > 0) await sleep(2_000); // let the previous run's processes wind down
      log(`== ${engine} (${index + 1}/${options.engines.length}): ${scenario.name}, ${options.peers} viewers, ${options.durationS} s`);
      const runStartMs = Date.now();
      const progress = (tS: number) => {
        const leftMs = (options.durationS - tS) * 1000 + (options.engines.length - index - 1) * (options.durationS + overheadS) * 1000;
        return `[${index + 1}/${options.engines.length} ${engine} ${Math.round(tS)}/${options.durationS} s · elapsed ${minutes(Date.now() - comparisonStartMs)} · ~${minutes(leftMs)} left]`;
      };
      try {
        const record = await runEngine(stage, pages, scenario, engine, runOptions, { log, progress, stopEarly: (reason) => noStart.abort(reason) });
        const run = summarizeRun(record);
        const cut = aborted();
        if (cut) run.notes.push(`Cut short after ${record.durationS} of ${options.durationS} s (${cut}).`);
        runs.push(run);
      } catch (error) {
        if (!aborted()) throw error;
        log(`${engine}: stopped while starting (${(error as Error).message})`);
      }
      overheadS = (Date.now() - runStartMs) / 1000 - options.durationS;
    }
    const cut = aborted();
    const machine = { cpus: cpus().length, platform: `${process.platform}-${process.arch}`, node: process.version };
    const thresholdResults = checkThresholds(options.thresholds ?? [], runs);
    if (runs.length === 0) {
      // Cut short before any engine ran: a report that says so, with nothing to show.
      if (!cut) throw new Error('no engine ran');
      const empty = { schemaVersion: REPORT_SCHEMA_VERSION, shoalCommit: shoalCommit(), partial: { reason: cut }, thresholds: thresholdResults, runs: [], machine, command: options.command ?? '', createdAt: new Date().toISOString() };
      await writeReport(options.outDir, empty, () => `<!doctype html><meta charset="utf-8"><title>Shoal swarm: partial</title><p>Cut short before any engine ran: ${cut.replace(/[<&]/g, '')}.</p>\n`);
      throw new Error(`cut short before any engine ran (${cut})`);
    }
    const report = buildSwarmReport(runs, {
      machine,
      command: options.command ?? '',
      shoalCommit: shoalCommit(),
      partial: cut ? { reason: cut, ...(noStart.signal.aborted ? { code: NO_VIEWER_PLAYING } : {}) } : null,
      thresholds: thresholdResults,
    });
    await writeReport(options.outDir, report, () => renderReportHtml(report));
    log(renderReportTable(report));
    if (cut) log(`PARTIAL: ${cut}; the report covers what ran`);
    for (const line of renderThresholdLines(thresholdResults)) log(line);
    return report;
  } finally {
    await pages?.close();
    await closeStage(stage);
  }
}
