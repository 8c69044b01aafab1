// The swarm runner: for each engine, a fresh origin and tracker, N Chromium viewers joining as the
// scenario says, sampling while they play, then the report. One browser, one context per viewer.
import { realpathSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { chromiumLaunchOptions } from '../chromium.js';
import { startOrigin, type Origin } from '../origin.js';
import { startStaticServer, type StaticServer } from '../static-server.js';
import { startTrackerProcess, type TrackerProcess } from '../tracker-process.js';
import type { TimelinePoint } from './metrics.js';
import { buildSwarmReport, summarizeRun, type RunRecord, type RunReport, type SwarmReport } from './report.js';
import { renderReportHtml } from './report-html.js';
import { renderReportTable } from './report-table.js';
import { joinOffsetsMs, p2pOffViewers, scenarioByName, type Scenario } from './scenarios.js';
import { openViewer, type ViewerSession } from './viewer-session.js';
import type { EngineName } from './viewer-snapshot.js';

export interface SwarmOptions {
  scenario: Scenario | string;
  peers: number;
  durationS: number;
  /** Run one after another with identical settings; 'http' is the baseline. */
  engines: EngineName[];
  /** Where report.json and report.html go; nothing is written without it. */
  outDir?: string;
  /** An external stream (master playlist URL): no origin count then. */
  streamUrl?: string;
  /** An external tracker (ws:// or wss://); default: Shoal's tracker as a process, fresh per run. */
  trackerUrl?: string;
  /** Pin a rendition (hls.js level index); default -1 (ABR). */
  level?: number;
  /** Seconds between samples of every viewer; default 5 (2 for runs under a minute). */
  sampleIntervalS?: number;
  log?: (line: string) => void;
  /** The command line, recorded in the report. */
  command?: string;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const pagesDir = fileURLToPath(new URL('../../pages', import.meta.url));
const repoPath = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));

/** Directories the viewer page loads its scripts from. */
export function viewerPageMounts(): Record<string, string> {
  // p2p-media-loader's packages export only their ESM entry, so find them as installed folders.
  const packageDir = (name: string) => realpathSync(fileURLToPath(new URL(`../../node_modules/${name}`, import.meta.url)));
  return {
    '/': pagesDir,
    '/lib/hls.js/': join(packageDir('hls.js'), 'dist'),
    '/lib/p2p-media-loader-core/': join(packageDir('p2p-media-loader-core'), 'dist'),
    '/lib/p2p-media-loader-hlsjs/': join(packageDir('p2p-media-loader-hlsjs'), 'dist'),
    '/lib/shoal-hlsjs/': repoPath('packages/hlsjs/dist'),
  };
}

export async function launchSwarmBrowser(): Promise<Browser> {
  const launch = chromiumLaunchOptions();
  return chromium.launch({ ...launch, args: [...launch.args, '--mute-audio'] });
}

/** Runs every engine of the comparison and returns (and, with outDir, writes) the report. */
export async function runSwarm(options: SwarmOptions): Promise<SwarmReport> {
  const scenario = typeof options.scenario === 'string' ? scenarioByName(options.scenario) : options.scenario;
  if (!Number.isInteger(options.peers) || options.peers < 1) throw new Error(`peers must be a positive integer, got ${options.peers}`);
  if (!(options.durationS > 0)) throw new Error(`durationS must be positive, got ${options.durationS}`);
  if (options.engines.length === 0) throw new Error('engines must name at least one engine');
  const log = options.log ?? (() => {});
  const browser = await launchSwarmBrowser();
  let pages: StaticServer | undefined;
  try {
    pages = await startStaticServer({ mounts: viewerPageMounts() });
    const runs: RunReport[] = [];
    for (const [index, engine] of options.engines.entries()) {
      if (index > 0) await sleep(2_000); // let the previous run's processes wind down
      log(`== ${engine}: ${scenario.name}, ${options.peers} viewers, ${options.durationS} s`);
      const record = await runEngine(browser, pages, scenario, engine, options, log);
      runs.push(summarizeRun(record));
    }
    const report = buildSwarmReport(runs, {
      machine: { cpus: cpus().length, platform: `${process.platform}-${process.arch}`, node: process.version },
      command: options.command ?? '',
    });
    if (options.outDir) {
      await mkdir(options.outDir, { recursive: true });
      await writeFile(join(options.outDir, 'report.json'), `${JSON.stringify(report, null, 2)}\n`);
      await writeFile(join(options.outDir, 'report.html'), renderReportHtml(report));
    }
    log(renderReportTable(report));
    return report;
  } finally {
    await pages?.close();
    await browser.close().catch(() => {});
  }
}

/** The tracker's own /stats.json totals: proof that the engine's peers met through it. */
async function readTrackerStats(httpUrl: string): Promise<Record<string, unknown> | null> {
  try {
    const response = await fetch(`${httpUrl}/stats.json`, { signal: AbortSignal.timeout(3_000) });
    const stats = (await response.json()) as { peers?: unknown; swarms?: unknown; totals?: unknown };
    return { peers: stats.peers, swarms: stats.swarms, totals: stats.totals };
  } catch {
    return null;
  }
}

async function runEngine(
  browser: Browser,
  pages: StaticServer,
  scenario: Scenario,
  engine: EngineName,
  options: SwarmOptions,
  log: (line: string) => void,
): Promise<RunRecord> {
  let origin: Origin | null = null;
  let tracker: TrackerProcess | null = null;
  const viewers: ViewerSession[] = [];
  const endedAtMs = new Map<string, number>();
  try {
    if (!options.streamUrl) origin = await startOrigin({ liveWindowSize: scenario.liveWindowSize });
    if (!options.trackerUrl) tracker = await startTrackerProcess();
    const streamUrl = options.streamUrl ?? `${origin!.url}/${scenario.stream}/master.m3u8`;
    const trackerUrl = options.trackerUrl ?? tracker!.url;
    const viewerUrl = (p2p: boolean) => {
      const query = new URLSearchParams({
        src: streamUrl,
        engine,
        p2p: p2p ? '1' : '0',
        trackers: trackerUrl,
        maxBufferLength: String(scenario.maxBufferLength),
        liveSyncDurationCount: String(scenario.liveSyncDurationCount),
        level: String(options.level ?? -1),
      });
      return `${pages.url}/swarm-viewer.html?${query}`;
    };
    const p2pOff = p2pOffViewers(scenario, options.peers);
    const join = async (index: number) => {
      const p2p = engine !== 'http' && !p2pOff.has(index % options.peers);
      const id = `v${index}`;
      try {
        viewers.push(await openViewer(browser, { id, index, p2p, url: viewerUrl(p2p), log }));
      } catch (error) {
        log(`${id}: could not join: ${(error as Error).message}`);
      }
    };

    const startedAtMs = Date.now();
    const endAtMs = startedAtMs + options.durationS * 1000;
    const intervalMs = (options.sampleIntervalS ?? (options.durationS < 60 ? 2 : 5)) * 1000;
    const joins = joinOffsetsMs(scenario, options.peers, options.durationS).map((offsetMs, index) => ({ atMs: startedAtMs + offsetMs, index }));
    const churnEveryMs = scenario.churn ? scenario.churn.everyS * 1000 : Infinity;
    let nextChurnMs = (joins.at(-1)?.atMs ?? startedAtMs) + churnEveryMs;
    let nextIndex = options.peers;
    let nextSampleMs = startedAtMs + intervalMs;
    const timeline: TimelinePoint[] = [];
    const loadAverage = { before: Math.round(loadavg()[0]! * 100) / 100, peak: 0 };

    const sampleAll = async () => {
      await Promise.all(viewers.map((viewer) => viewer.sample()));
      const delivered = viewers.reduce((sum, viewer) => sum + (viewer.last?.deliveredBytes ?? 0), 0);
      const clientHttp = viewers.reduce((sum, viewer) => sum + (viewer.last?.httpBytes ?? 0), 0);
      const originBytes = origin ? origin.stats().segments.bytes : clientHttp;
      return { delivered, originBytes };
    };
    const recordSample = async () => {
      const { delivered, originBytes } = await sampleAll();
      const tS = Math.round((Date.now() - startedAtMs) / 100) / 10;
      timeline.push({ tS, originSegmentBytes: originBytes, deliveredBytes: delivered });
      loadAverage.peak = Math.max(loadAverage.peak, Math.round(loadavg()[0]! * 100) / 100);
      const active = viewers.filter((viewer) => viewer.leftAtMs === null);
      const playing = active.filter((viewer) => viewer.last?.firstFrameMs != null).length;
      const share = delivered > 0 ? `${Math.round((1 - originBytes / delivered) * 100)}%` : '–';
      log(`  ${engine} t=${tS}s viewers ${active.length} (playing ${playing}) offload ${share} origin ${(originBytes / 1e6).toFixed(1)} MB`);
    };

    while (Date.now() < endAtMs) {
      const now = Date.now();
      while (joins.length > 0 && joins[0]!.atMs <= now) await join(joins.shift()!.index);
      if (now >= nextChurnMs && endAtMs - now > churnEveryMs / 2) {
        const leaving = viewers.find((viewer) => viewer.leftAtMs === null);
        if (leaving) {
          log(`  churn: ${leaving.id} leaves, v${nextIndex} joins`);
          await leaving.leave();
          endedAtMs.set(leaving.id, Date.now());
        }
        await join(nextIndex);
        nextIndex += 1;
        nextChurnMs += churnEveryMs;
      }
      if (now >= nextSampleMs) {
        await recordSample();
        nextSampleMs += intervalMs;
      }
      const nextEventMs = Math.min(joins[0]?.atMs ?? Infinity, nextChurnMs, nextSampleMs, endAtMs);
      await sleep(Math.max(10, Math.min(250, nextEventMs - Date.now())));
    }

    // Final counts: every viewer, then the origin right away, so both cover the same transfers.
    await recordSample();
    const originStats = origin?.stats();
    const finishedAtMs = Date.now();
    const trackerStats = tracker ? await readTrackerStats(tracker.httpUrl) : null;
    return {
      scenario,
      engine,
      peers: options.peers,
      durationS: options.durationS,
      streamUrl,
      trackerUrl,
      startedAtMs,
      origin: originStats
        ? { segmentBytes: originStats.segments.bytes, segmentRequests: originStats.segments.requests, distinctSegmentBytes: originStats.distinctSegmentBytes }
        : null,
      viewers: viewers.map((viewer) => ({
        id: viewer.id,
        p2p: viewer.p2p,
        joinedAtMs: viewer.joinedAtMs,
        leftAtMs: viewer.leftAtMs,
        endedAtMs: endedAtMs.get(viewer.id) ?? finishedAtMs,
        final: viewer.last,
      })),
      timeline,
      loadAverage,
      trackerStats,
    };
  } finally {
    await Promise.all(viewers.map((viewer) => viewer.close()));
    await tracker?.close();
    await origin?.close();
  }
}
