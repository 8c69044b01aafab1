// The swarm runner: for each engine, a fresh origin and tracker, N viewers (Chromium, or the mix
// asked for) joining as the scenario says, sampling while they play, then the report. Without a
// network profile: all on loopback, a Chromium context or a Firefox of its own each. With one
// (--network): a browser per viewer in its own network namespace, its link shaped (viewer-networks.ts).
import { appendFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { networkProfile } from '../network-profiles.js';
import { startOrigin, type Origin } from '../origin.js';
import { startStaticServer, type StaticServer } from '../static-server.js';
import { startTrackerProcess, type TrackerProcess } from '../tracker-process.js';
import { FAULT_WARMUP_S, FaultDriver, faultsDurationS, type FaultHost, type FaultOptions, type HostileSession, type HostileSnapshot } from './faults.js';
import type { MemoryPoint } from './memory-report.js';
import type { TimelinePoint } from './metrics.js';
import { buildSwarmReport, summarizeRun, type RunRecord } from './report.js';
import { REPORT_SCHEMA_VERSION, type RunReport, type SwarmReport } from './report-schema.js';
import { renderReportHtml } from './report-html.js';
import { renderReportTable } from './report-table.js';
import { joinOffsetsMs, p2pOffViewers, scenarioByName, type Scenario } from './scenarios.js';
import { closeStage, hubHost, iceServersOf, LoopbackPages, openStage, readTrackerStats, shoalCommit, viewerPageMounts, ViewerSlots, type NatMode, type Stage } from './stage.js';
import { NO_VIEWER_PLAYING, StartWatch } from './start-watch.js';
import { checkExternalStream } from './stream-preflight.js';
import { checkThresholds, renderThresholdLines, type Threshold } from './thresholds.js';
import { browserOfViewer, mixSize, type BrowserMix, type BrowserName } from './viewer-browsers.js';
import { openViewer, type ViewerSession } from './viewer-session.js';
import type { EngineName } from './viewer-snapshot.js';

export interface SwarmOptions {
  /** Default: live-normal; with streamUrl, live-normal or vod as the stream's playlist says. */
  scenario?: Scenario | string;
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
  /**
   * A network profile (../network-profiles.ts): each viewer its own Chromium in its own network
   * namespace, its link shaped as the profile says. Default: one Chromium on loopback, unshaped.
   */
  network?: string;
  /**
   * Every viewer behind a NAT of its own, with coturn on the test network: 'stun' (cone NATs,
   * STUN offered) or 'turn' (symmetric NATs, STUN and TURN offered: only the relay gets through).
   * Implies network 'unlimited' unless one is given.
   */
  nat?: NatMode;
  /**
   * Verify segments from peers against the origin's SHA-256 manifest (PeerTube's format), as
   * PeerTube does: default true; ignored (and said so) for an external stream.
   */
  integrity?: boolean;
  /**
   * Write each viewer's trace (hls.js fragment events, stalls with the buffer around them, and
   * Shoal's engine log) to outDir/trace/ENGINE-VIEWER.log. Off by default: it costs CPU.
   */
  trace?: boolean;
  /** --assert thresholds, checked on the report (report.thresholds); they never throw. */
  thresholds?: Threshold[];
  /**
   * Cuts the comparison short: the engine run under way stops sampling, and the report covers
   * what ran, marked partial with the signal's reason (a string).
   */
  signal?: AbortSignal;
  log?: (line: string) => void;
  /** The command line, recorded in the report. */
  command?: string;
  /** Faults to run, one after another, after the joins and a warm-up (./faults.ts). */
  faults?: FaultOptions;
  /** The browsers the viewers play in, as many as `peers` in all (--browsers); default: all Chromium. */
  browsers?: BrowserMix;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const minutes = (ms: number) => {
  const seconds = Math.max(0, Math.round(ms / 1000));
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}`;
};

/** Runs every engine of the comparison and returns (and, with outDir, writes) the report. */
export async function runSwarm(options: SwarmOptions): Promise<SwarmReport> {
  const requested = typeof options.scenario === 'string' ? scenarioByName(options.scenario) : options.scenario;
  if (!Number.isInteger(options.peers) || options.peers < 1) throw new Error(`peers must be a positive integer, got ${options.peers}`);
  if (!(options.durationS > 0)) throw new Error(`durationS must be positive, got ${options.durationS}`);
  if (options.engines.length === 0) throw new Error('engines must name at least one engine');
  if (options.browsers && mixSize(options.browsers) !== options.peers) {
    throw new Error(`the browser mix names ${mixSize(options.browsers)} viewers but peers is ${options.peers}`);
  }
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
        const record = await runEngine(stage, pages, scenario, engine, runOptions, log, progress, (reason) => noStart.abort(reason));
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
      if (options.outDir) {
        await mkdir(options.outDir, { recursive: true });
        await writeFile(join(options.outDir, 'report.json'), `${JSON.stringify(empty, null, 2)}\n`);
        await writeFile(join(options.outDir, 'report.html'), `<!doctype html><meta charset="utf-8"><title>Shoal swarm: partial</title><p>Cut short before any engine ran: ${cut.replace(/[<&]/g, '')}.</p>\n`);
      }
      throw new Error(`cut short before any engine ran (${cut})`);
    }
    const report = buildSwarmReport(runs, {
      machine,
      command: options.command ?? '',
      shoalCommit: shoalCommit(),
      partial: cut ? { reason: cut, ...(noStart.signal.aborted ? { code: NO_VIEWER_PLAYING } : {}) } : null,
      thresholds: thresholdResults,
    });
    if (options.outDir) {
      await mkdir(options.outDir, { recursive: true });
      await writeFile(join(options.outDir, 'report.json'), `${JSON.stringify(report, null, 2)}\n`);
      await writeFile(join(options.outDir, 'report.html'), renderReportHtml(report));
    }
    log(renderReportTable(report));
    if (cut) log(`PARTIAL: ${cut}; the report covers what ran`);
    for (const line of renderThresholdLines(thresholdResults)) log(line);
    return report;
  } finally {
    await pages?.close();
    await closeStage(stage);
  }
}

async function runEngine(
  stage: Stage,
  pages: StaticServer,
  scenario: Scenario,
  engine: EngineName,
  options: SwarmOptions,
  log: (line: string) => void,
  progress: (tS: number) => string,
  stopEarly: (reason: string) => void,
): Promise<RunRecord> {
  let origin: Origin | null = null;
  let tracker: TrackerProcess | null = null;
  const viewers: ViewerSession[] = [];
  const hostilePages: HostileSession[] = [];
  const endedAtMs = new Map<string, number>();
  const traceDir = options.trace && options.outDir ? join(options.outDir, 'trace') : null;
  if (traceDir) await mkdir(traceDir, { recursive: true });
  const browserOf = (index: number): BrowserName => (options.browsers ? browserOfViewer(options.browsers, index) : 'chromium');
  // Shaped runs: each viewer's namespace and browser, made before it joins (churn: when it joins).
  const slots = stage.kind === 'shaped' ? new ViewerSlots(stage, pages.url, browserOf) : null;
  const loopback = stage.kind === 'loopback' ? new LoopbackPages(stage, browserOf) : null;
  try {
    const host = hubHost(stage);
    if (!options.streamUrl) origin = await startOrigin({ liveWindowSize: scenario.liveWindowSize, host });
    if (!options.trackerUrl) tracker = await startTrackerProcess({ host });
    const streamUrl = options.streamUrl ?? `${origin!.url}/${scenario.stream}/master.m3u8`;
    const integrityUrl = origin && options.integrity !== false ? `${origin.url}/${scenario.stream}/segments-sha256.json` : null;
    const trackerUrl = options.trackerUrl ?? tracker!.url;
    const viewerUrl = (p2p: boolean, uploads: boolean) => {
      const query = new URLSearchParams({
        src: streamUrl,
        engine,
        p2p: p2p ? '1' : '0',
        upload: uploads ? '1' : '0',
        trackers: trackerUrl,
        maxBufferLength: String(scenario.maxBufferLength),
        liveSyncDurationCount: String(scenario.liveSyncDurationCount),
        level: String(options.level ?? -1),
        iceServers: JSON.stringify(iceServersOf(stage)),
        integrity: integrityUrl ?? '',
        ...(traceDir ? { trace: '1' } : {}),
      });
      return `${pages.url}/swarm-viewer.html?${query}`;
    };
    const p2pOff = p2pOffViewers(scenario, options.peers);
    let startedAtMs = Date.now();
    const join = async (index: number) => {
      const p2p = engine !== 'http' && !p2pOff.has(index % options.peers);
      const id = `v${index}`;
      try {
        const slot = slots ? await slots.slot(index) : null;
        const page = loopback ? await loopback.page(index) : await slot!.browser.newPage();
        // A profile's non-uploaders run their engine with upload off (and a narrow uplink).
        const uploads = slot?.linkRecord.link.uploads ?? true;
        const onTrace = traceDir ? (lines: string[]) => appendFileSync(`${traceDir}/${engine}-${id}.log`, `${lines.join('\n')}\n`) : undefined;
        viewers.push(await openViewer(page, { id, index, p2p, url: viewerUrl(p2p, uploads), log, onTrace }));
      } catch (error) {
        log(`${id}: could not join: ${(error as Error).message}`);
      }
    };
    // A browser takes a second or more to start on a busy machine (a Firefox several): those of the
    // viewers' own start before the clock, so that the joins keep the scenario's schedule.
    if (await (slots ?? loopback!).startAhead(options.peers, () => options.signal?.aborted === true, log)) {
      startedAtMs = Date.now();
      slots?.start(startedAtMs);
    }

    const endAtMs = startedAtMs + options.durationS * 1000;
    const memory: MemoryPoint[] = [];
    const intervalMs = (options.sampleIntervalS ?? (options.durationS < 60 ? 2 : 5)) * 1000;
    const joins = joinOffsetsMs(scenario, options.peers, options.durationS).map((offsetMs, index) => ({ atMs: startedAtMs + offsetMs, index }));
    const churnEveryMs = scenario.churn ? scenario.churn.everyS * 1000 : Infinity;
    let nextChurnMs = (joins.at(-1)?.atMs ?? startedAtMs) + churnEveryMs;
    let nextIndex = options.peers;
    let nextSampleMs = startedAtMs + intervalMs;
    const faultHost: FaultHost = {
      startedAtMs,
      origin,
      activeViewers: () => viewers.filter((viewer) => viewer.leftAtMs === null),
      async join() {
        const index = nextIndex;
        nextIndex += 1;
        await join(index);
        return viewers.find((viewer) => viewer.index === index);
      },
      async killTracker() {
        if (!tracker) return false;
        const exited = new Promise<void>((resolve) => (tracker!.process.exitCode !== null ? resolve() : tracker!.process.once('exit', () => resolve())));
        tracker.process.kill('SIGKILL');
        await exited;
        return true;
      },
      async restartTracker() {
        tracker = await startTrackerProcess({ host, port: Number(new URL(tracker!.url).port) });
      },
      async trackerPeers() {
        const stats = tracker ? await readTrackerStats(tracker.httpUrl) : null;
        return typeof stats?.peers === 'number' ? stats.peers : null;
      },
      async openHostile(behaviour) {
        const page = loopback ? await loopback.page(1000 + hostilePages.length, 'chromium') : await (await slots!.slot(1000 + hostilePages.length)).browser.newPage();
        const query = new URLSearchParams({ src: streamUrl, trackers: trackerUrl, iceServers: JSON.stringify(iceServersOf(stage)), behaviour });
        await page.goto(`${pages.url}/hostile-peer.html?${query}`);
        const session: HostileSession = {
          behaviour,
          snapshot: () =>
            page
              .evaluate(() => (window as unknown as { hostilePeer?: { snapshot(): unknown } }).hostilePeer?.snapshot() ?? null)
              .then((snapshot) => snapshot as HostileSnapshot | null)
              .catch(() => null),
          close: () => page.close().catch(() => {}),
        };
        hostilePages.push(session);
        return session;
      },
      log,
    };
    const faultDriver = options.faults?.faults.length
      ? new FaultDriver(faultHost, options.faults, (joins.at(-1)?.atMs ?? startedAtMs) + FAULT_WARMUP_S * 1000)
      : null;
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
      slots?.sample((index) => viewers.find((viewer) => viewer.index === index)?.leftAtMs != null);
      const { delivered, originBytes } = await sampleAll();
      const tS = Math.round((Date.now() - startedAtMs) / 100) / 10;
      for (const viewer of viewers) {
        if (viewer.leftAtMs !== null || !viewer.last) continue;
        memory.push({ tS, id: viewer.id, heapBytes: viewer.last.heapBytes ?? null, storeBytes: viewer.last.storeBytes ?? null });
      }
      timeline.push({ tS, originSegmentBytes: originBytes, deliveredBytes: delivered });
      loadAverage.peak = Math.max(loadAverage.peak, Math.round(loadavg()[0]! * 100) / 100);
      const active = viewers.filter((viewer) => viewer.leftAtMs === null);
      const playing = active.filter((viewer) => viewer.last?.firstFrameMs != null).length;
      const share = delivered > 0 ? `${Math.round((1 - originBytes / delivered) * 100)}%` : '–';
      log(`  ${progress(tS)} viewers ${active.length} (playing ${playing}) offload ${share} origin ${(originBytes / 1e6).toFixed(1)} MB`);
    };

    const startWatch = new StartWatch(startedAtMs, stopEarly);
    while (Date.now() < endAtMs && !options.signal?.aborted) {
      const now = Date.now();
      while (joins.length > 0 && joins[0]!.atMs <= now) await join(joins.shift()!.index);
      if (now >= nextChurnMs && endAtMs - now > churnEveryMs / 2) {
        // The oldest viewer leaves, but the first `keep` watch throughout (the soak's long-lived engines).
        const leaving = viewers.find((viewer) => viewer.leftAtMs === null && viewer.index >= (scenario.churn?.keep ?? 0));
        if (leaving) {
          log(`  churn: ${leaving.id} leaves, v${nextIndex} joins`);
          await leaving.leave();
          endedAtMs.set(leaving.id, Date.now());
        }
        await join(nextIndex);
        nextIndex += 1;
        nextChurnMs += churnEveryMs;
      }
      faultDriver?.tick(now);
      if (now >= nextSampleMs) {
        await recordSample();
        while (nextSampleMs <= Date.now()) nextSampleMs += intervalMs; // a slow join or sample skips, never bunches, samples
      }
      await startWatch.check(viewers);
      const nextEventMs = Math.min(joins[0]?.atMs ?? Infinity, nextChurnMs, nextSampleMs, endAtMs);
      await sleep(Math.max(10, Math.min(250, nextEventMs - Date.now())));
    }

    const faults = faultDriver ? await faultDriver.finish() : null;
    // Final counts: every viewer, then the origin right away, so both cover the same transfers.
    await recordSample();
    const originStats = origin?.stats();
    const finishedAtMs = Date.now();
    const trackerStats = tracker ? await readTrackerStats(tracker.httpUrl) : null;
    return {
      scenario,
      engine,
      peers: options.peers,
      // A run cut short lasted what it lasted.
      durationS: options.signal?.aborted ? Math.round((finishedAtMs - startedAtMs) / 1000) : options.durationS,
      streamUrl,
      trackerUrl,
      startedAtMs,
      origin: originStats
        ? { segmentBytes: originStats.segments.bytes, segmentRequests: originStats.segments.requests, distinctSegmentBytes: originStats.distinctSegmentBytes }
        : null,
      viewers: viewers.map((viewer) => {
        const link = slots?.get(viewer.index)?.linkRecord.link;
        return {
          id: viewer.id,
          p2p: viewer.p2p,
          browser: viewer.browser,
          nonUploading: link?.uploads === false,
          uplinkBitsPerS: link?.upBitsPerS ?? Infinity,
          joinedAtMs: viewer.joinedAtMs,
          leftAtMs: viewer.leftAtMs,
          endedAtMs: endedAtMs.get(viewer.id) ?? finishedAtMs,
          final: viewer.last,
        };
      }),
      timeline,
      loadAverage,
      trackerStats,
      integrity: engine === 'http' ? null : integrityUrl !== null,
      faults,
      memory,
      network: slots?.record() ?? null,
    };
  } finally {
    await Promise.all(viewers.map((viewer) => viewer.close()));
    await Promise.all(hostilePages.map((hostile) => hostile.close()));
    await slots?.close();
    await loopback?.close();
    await tracker?.close();
    await origin?.close();
  }
}
