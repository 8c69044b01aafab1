// One engine's run in a swarm comparison: a fresh origin and tracker, the viewers joining on the
// scenario's schedule (and leaving, under churn), the faults, a sample of every viewer at each
// interval, and at the end the record the report is made from. Everything it opened is closed,
// even when it throws.
import { appendFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { startOrigin, type Origin } from '../origin.js';
import type { StaticServer } from '../static-server.js';
import { startTrackerProcess, type TrackerProcess } from '../tracker-process.js';
import { FAULT_WARMUP_S, FaultDriver, type FaultHost, type FaultRecord, type HostileSession, type HostileSnapshot } from './faults.js';
import type { MemoryPoint } from './memory-report.js';
import type { TimelinePoint } from './metrics.js';
import type { RunRecord } from './report.js';
import { joinOffsetsMs, p2pOffViewers, type Scenario } from './scenarios.js';
import { hubHost, iceServersOf, LoopbackPages, readTrackerStats, ViewerSlots, type Stage } from './stage.js';
import { StartWatch } from './start-watch.js';
import { destinationOf } from './uplink-counters.js';
import { UplinkLedger } from './uplink-ledger.js';
import type { SwarmOptions } from './swarm-options.js';
import { browserOfViewer, type BrowserName } from './viewer-browsers.js';
import { openViewer, type ViewerSession } from './viewer-session.js';
import type { EngineName } from './viewer-snapshot.js';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** How a run talks back to the comparison around it. */
export interface EngineRunHooks {
  log: (line: string) => void;
  /** The progress line's prefix at `tS` seconds into this run. */
  progress: (tS: number) => string;
  /** Stops the whole comparison early (no viewer started playing). */
  stopEarly: (reason: string) => void;
}

/** Runs one engine of a comparison, from fresh servers to its record. */
export async function runEngine(stage: Stage, pages: StaticServer, scenario: Scenario, engine: EngineName, options: SwarmOptions, hooks: EngineRunHooks): Promise<RunRecord> {
  const traceDir = options.trace && options.outDir ? join(options.outDir, 'trace') : null;
  if (traceDir) await mkdir(traceDir, { recursive: true });
  const run = new EngineRun(stage, pages, scenario, engine, options, hooks, traceDir);
  try {
    await run.start();
    const faults = await run.play();
    return await run.finish(faults);
  } finally {
    await run.close();
  }
}

class EngineRun {
  private origin: Origin | null = null;
  private tracker: TrackerProcess | null = null;
  private readonly viewers: ViewerSession[] = [];
  private readonly hostilePages: HostileSession[] = [];
  /** When a viewer that left under churn was gone, by viewer id. */
  private readonly endedAtMs = new Map<string, number>();
  /** Shaped runs: each viewer's namespace and browser, made before it joins (churn: when it joins). */
  private readonly slots: ViewerSlots | null;
  private readonly loopback: LoopbackPages | null;
  private readonly p2pOff: Set<number>;
  private streamUrl = '';
  private trackerUrl = '';
  private integrityUrl: string | null = null;
  private startedAtMs = 0;
  /** The index the next viewer that joins beyond the scenario's first `peers` gets. */
  private nextIndex: number;
  private readonly memory: MemoryPoint[] = [];
  private readonly timeline: TimelinePoint[] = [];
  private readonly loadAverage = { before: 0, peak: 0 };
  /** Shaped runs: each viewer's uplink by class. */
  private uplinks: UplinkLedger | null = null;
  /** Every viewer of the schedule has joined: the period after the joins runs. */
  private joinsDone = false;

  constructor(
    private readonly stage: Stage,
    private readonly pages: StaticServer,
    private readonly scenario: Scenario,
    private readonly engine: EngineName,
    private readonly options: SwarmOptions,
    private readonly hooks: EngineRunHooks,
    private readonly traceDir: string | null,
  ) {
    const browserOf = (index: number): BrowserName => (options.browsers ? browserOfViewer(options.browsers, index) : 'chromium');
    this.slots = stage.kind === 'shaped' ? new ViewerSlots(stage, pages.url, browserOf) : null;
    this.loopback = stage.kind === 'loopback' ? new LoopbackPages(stage, browserOf) : null;
    this.p2pOff = p2pOffViewers(scenario, options.peers);
    this.nextIndex = options.peers;
  }

  /** Starts the origin and tracker (unless external ones are given) and the viewers' browsers; starts the clock. */
  async start(): Promise<void> {
    const { options, scenario } = this;
    const host = hubHost(this.stage);
    if (!options.streamUrl) this.origin = await startOrigin({ liveWindowSize: scenario.liveWindowSize, host });
    if (!options.trackerUrl) this.tracker = await startTrackerProcess({ host });
    this.streamUrl = options.streamUrl ?? `${this.origin!.url}/${scenario.stream}/master.m3u8`;
    this.integrityUrl = this.origin && options.integrity !== false ? `${this.origin.url}/${scenario.stream}/segments-sha256.json` : null;
    this.trackerUrl = options.trackerUrl ?? this.tracker!.url;
    if (this.slots) {
      this.uplinks = new UplinkLedger({ origin: destinationOf(this.streamUrl), tracker: this.trackerUrl ? destinationOf(this.trackerUrl) : null });
      this.slots.countUplinks(this.uplinks);
    }
    this.startedAtMs = Date.now();
    // A browser takes a second or more to start on a busy machine (a Firefox several): those of the
    // viewers' own start before the clock, so that the joins keep the scenario's schedule.
    if (await (this.slots ?? this.loopback!).startAhead(options.peers, () => options.signal?.aborted === true, this.hooks.log)) {
      this.startedAtMs = Date.now();
      this.slots?.start(this.startedAtMs);
    }
  }

  /** Plays the run to its end (or until the signal): joins, churn, faults and samples on their schedules. */
  async play(): Promise<FaultRecord | null> {
    const { options, scenario, startedAtMs } = this;
    const endAtMs = startedAtMs + options.durationS * 1000;
    const intervalMs = (options.sampleIntervalS ?? (options.durationS < 60 ? 2 : 5)) * 1000;
    const joins = joinOffsetsMs(scenario, options.peers, options.durationS).map((offsetMs, index) => ({ atMs: startedAtMs + offsetMs, index }));
    const churnEveryMs = scenario.churn ? scenario.churn.everyS * 1000 : Infinity;
    let nextChurnMs = (joins.at(-1)?.atMs ?? startedAtMs) + churnEveryMs;
    let nextSampleMs = startedAtMs + intervalMs;
    const faultDriver = options.faults?.faults.length
      ? new FaultDriver(this.faultHost(), options.faults, (joins.at(-1)?.atMs ?? startedAtMs) + FAULT_WARMUP_S * 1000)
      : null;
    this.loadAverage.before = Math.round(loadavg()[0]! * 100) / 100;
    const startWatch = new StartWatch(startedAtMs, this.hooks.stopEarly);
    while (Date.now() < endAtMs && !options.signal?.aborted) {
      const now = Date.now();
      while (joins.length > 0 && joins[0]!.atMs <= now) await this.join(joins.shift()!.index);
      this.joinsDone = joins.length === 0;
      if (now >= nextChurnMs && endAtMs - now > churnEveryMs / 2) {
        await this.churn();
        nextChurnMs += churnEveryMs;
      }
      faultDriver?.tick(now);
      if (now >= nextSampleMs) {
        await this.recordSample();
        while (nextSampleMs <= Date.now()) nextSampleMs += intervalMs; // a slow join or sample skips, never bunches, samples
      }
      await startWatch.check(this.viewers);
      const nextEventMs = Math.min(joins[0]?.atMs ?? Infinity, nextChurnMs, nextSampleMs, endAtMs);
      await sleep(Math.max(10, Math.min(250, nextEventMs - Date.now())));
    }
    return faultDriver ? await faultDriver.finish() : null;
  }

  /** The final counts and the run's record. */
  async finish(faults: FaultRecord | null): Promise<RunRecord> {
    const { options, engine, slots } = this;
    // Final counts: every viewer, then the origin right away, so both cover the same transfers.
    await this.recordSample();
    const originStats = this.origin?.stats();
    const finishedAtMs = Date.now();
    const trackerStats = this.tracker ? await readTrackerStats(this.tracker.httpUrl) : null;
    return {
      scenario: this.scenario,
      engine,
      peers: options.peers,
      // A run cut short lasted what it lasted.
      durationS: options.signal?.aborted ? Math.round((finishedAtMs - this.startedAtMs) / 1000) : options.durationS,
      streamUrl: this.streamUrl,
      trackerUrl: this.trackerUrl,
      startedAtMs: this.startedAtMs,
      origin: originStats
        ? { segmentBytes: originStats.segments.bytes, segmentRequests: originStats.segments.requests, distinctSegmentBytes: originStats.distinctSegmentBytes }
        : null,
      viewers: this.viewers.map((viewer) => {
        const link = slots?.get(viewer.index)?.linkRecord.link;
        return {
          id: viewer.id,
          p2p: viewer.p2p,
          browser: viewer.browser,
          nonUploading: link?.uploads === false,
          uplinkBitsPerS: link?.upBitsPerS ?? Infinity,
          joinedAtMs: viewer.joinedAtMs,
          leftAtMs: viewer.leftAtMs,
          endedAtMs: this.endedAtMs.get(viewer.id) ?? finishedAtMs,
          final: viewer.last,
        };
      }),
      timeline: this.timeline,
      loadAverage: this.loadAverage,
      trackerStats,
      integrity: engine === 'http' ? null : this.integrityUrl !== null,
      faults,
      memory: this.memory,
      network: slots?.record() ?? null,
      uplinkClasses: this.uplinks?.record() ?? null,
      uplinkClassesFailure: this.uplinks?.failure ?? null,
    };
  }

  async close(): Promise<void> {
    await Promise.all(this.viewers.map((viewer) => viewer.close()));
    await Promise.all(this.hostilePages.map((hostile) => hostile.close()));
    await this.slots?.close();
    await this.loopback?.close();
    await this.tracker?.close();
    await this.origin?.close();
  }

  private viewerUrl(p2p: boolean, uploads: boolean): string {
    const { options, scenario } = this;
    const query = new URLSearchParams({
      src: this.streamUrl,
      engine: this.engine,
      p2p: p2p ? '1' : '0',
      upload: uploads ? '1' : '0',
      trackers: this.trackerUrl,
      maxBufferLength: String(scenario.maxBufferLength),
      liveSyncDurationCount: String(scenario.liveSyncDurationCount),
      level: String(options.level ?? -1),
      iceServers: JSON.stringify(iceServersOf(this.stage)),
      integrity: this.integrityUrl ?? '',
      ...(this.traceDir ? { trace: '1' } : {}),
    });
    return `${this.pages.url}/swarm-viewer.html?${query}`;
  }

  private async join(index: number): Promise<void> {
    const { engine, options, slots, loopback, traceDir } = this;
    const p2p = engine !== 'http' && !this.p2pOff.has(index % options.peers);
    const id = `v${index}`;
    try {
      const slot = slots ? await slots.slot(index) : null;
      const page = loopback ? await loopback.page(index) : await slot!.browser.newPage();
      // A profile's non-uploaders run their engine with upload off (and a narrow uplink).
      const uploads = slot?.linkRecord.link.uploads ?? true;
      const onTrace = traceDir ? (lines: string[]) => appendFileSync(`${traceDir}/${engine}-${id}.log`, `${lines.join('\n')}\n`) : undefined;
      this.viewers.push(await openViewer(page, { id, index, p2p, url: this.viewerUrl(p2p, uploads), log: this.hooks.log, onTrace }));
    } catch (error) {
      this.hooks.log(`${id}: could not join: ${(error as Error).message}`);
    }
  }

  /** The oldest viewer leaves, but the first `keep` watch throughout (the soak's long-lived engines); a new one joins. */
  private async churn(): Promise<void> {
    const leaving = this.viewers.find((viewer) => viewer.leftAtMs === null && viewer.index >= (this.scenario.churn?.keep ?? 0));
    if (leaving) {
      this.hooks.log(`  churn: ${leaving.id} leaves, v${this.nextIndex} joins`);
      await leaving.leave();
      this.endedAtMs.set(leaving.id, Date.now());
    }
    await this.join(this.nextIndex);
    this.nextIndex += 1;
  }

  /** What the fault phases act on: viewers, the tracker process, hostile pages. */
  private faultHost(): FaultHost {
    const { stage, pages, slots, loopback } = this;
    return {
      startedAtMs: this.startedAtMs,
      origin: this.origin,
      activeViewers: () => this.viewers.filter((viewer) => viewer.leftAtMs === null),
      join: async () => {
        const index = this.nextIndex;
        this.nextIndex += 1;
        await this.join(index);
        return this.viewers.find((viewer) => viewer.index === index);
      },
      killTracker: async () => {
        const tracker = this.tracker;
        if (!tracker) return false;
        const exited = new Promise<void>((resolve) => (tracker.process.exitCode !== null ? resolve() : tracker.process.once('exit', () => resolve())));
        tracker.process.kill('SIGKILL');
        await exited;
        return true;
      },
      restartTracker: async () => {
        this.tracker = await startTrackerProcess({ host: hubHost(stage), port: Number(new URL(this.tracker!.url).port) });
      },
      trackerPeers: async () => {
        const stats = this.tracker ? await readTrackerStats(this.tracker.httpUrl) : null;
        return typeof stats?.peers === 'number' ? stats.peers : null;
      },
      openHostile: async (behaviour) => {
        const page = loopback ? await loopback.page(1000 + this.hostilePages.length, 'chromium') : await (await slots!.slot(1000 + this.hostilePages.length)).browser.newPage();
        const query = new URLSearchParams({ src: this.streamUrl, trackers: this.trackerUrl, iceServers: JSON.stringify(iceServersOf(stage)), behaviour });
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
        this.hostilePages.push(session);
        return session;
      },
      log: this.hooks.log,
    };
  }

  /** Every viewer's counters, and the origin's (or, with an external stream, the viewers' own HTTP bytes). */
  private async sampleAll(): Promise<{ delivered: number; originBytes: number }> {
    const { viewers, origin } = this;
    await Promise.all(viewers.map((viewer) => viewer.sample()));
    const delivered = viewers.reduce((sum, viewer) => sum + (viewer.last?.deliveredBytes ?? 0), 0);
    const clientHttp = viewers.reduce((sum, viewer) => sum + (viewer.last?.httpBytes ?? 0), 0);
    const originBytes = origin ? origin.stats().segments.bytes : clientHttp;
    return { delivered, originBytes };
  }

  private async recordSample(): Promise<void> {
    const { viewers } = this;
    this.slots?.sample((index) => viewers.find((viewer) => viewer.index === index)?.leftAtMs != null);
    const { delivered, originBytes } = await this.sampleAll();
    const tS = Math.round((Date.now() - this.startedAtMs) / 100) / 10;
    const present = viewers.filter((viewer) => viewer.leftAtMs === null).map((viewer) => ({ index: viewer.index, snapshot: viewer.last }));
    await this.uplinks?.read(present, tS, this.joinsDone);
    for (const viewer of viewers) {
      if (viewer.leftAtMs !== null || !viewer.last) continue;
      this.memory.push({ tS, id: viewer.id, heapBytes: viewer.last.heapBytes ?? null, storeBytes: viewer.last.storeBytes ?? null });
    }
    this.timeline.push({ tS, originSegmentBytes: originBytes, deliveredBytes: delivered });
    this.loadAverage.peak = Math.max(this.loadAverage.peak, Math.round(loadavg()[0]! * 100) / 100);
    const active = viewers.filter((viewer) => viewer.leftAtMs === null);
    const playing = active.filter((viewer) => viewer.last?.firstFrameMs != null).length;
    const share = delivered > 0 ? `${Math.round((1 - originBytes / delivered) * 100)}%` : '–';
    this.hooks.log(`  ${this.hooks.progress(tS)} viewers ${active.length} (playing ${playing}) offload ${share} origin ${(originBytes / 1e6).toFixed(1)} MB`);
  }
}
