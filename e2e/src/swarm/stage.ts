// Where a swarm run's viewers play, the stage: one shared Chromium (and a Firefox per Firefox
// viewer) on loopback, or (--network) a browser per viewer in a shaped network namespace of its
// own, behind a NAT if asked, with the record of what each link carried (ViewerSlots). Also what
// a run reads from around it: the pages' script mounts, the sample stream's bitrate, the Shoal
// commit, the tracker's stats.
import { spawnSync } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import type { Browser as PuppeteerBrowser } from 'puppeteer-core';
import { chromiumLaunchOptions } from '../chromium.js';
import { launchFirefox } from '../firefox.js';
import { viewerLink, type NetworkProfile } from '../network-profiles.js';
import { defaultMediaDir, sampleMediaSpec } from '../sample-media.js';
import { startTurnServer, type RTCIceServerLike, type TurnServer } from '../turn-server.js';
import type { NetworkRecord, ViewerLinkRecord } from './link-report.js';
import type { UplinkLedger } from './uplink-ledger.js';
import { chromiumViewerBrowser, firefoxViewerBrowser, type BrowserName, type ViewerBrowser, type ViewerPage } from './viewer-browsers.js';
import { DOWNLINK_QUEUE_MS, LATENCY_MODEL, ViewerNetworks, type NatKind, type ViewerNamespace } from './viewer-networks.js';

export type NatMode = 'stun' | 'turn';
export const natModes: readonly NatMode[] = ['stun', 'turn'];

const natKinds: Record<NatMode, NatKind> = { stun: 'cone', turn: 'symmetric' };
const natDescriptions: Record<NatMode, string> = {
  stun: 'every viewer behind a NAT of its own (cone: Linux MASQUERADE keeps a mapping\'s port for every destination); coturn on the test network offered as STUN',
  turn: 'every viewer behind a symmetric NAT of its own (MASQUERADE --random-fully: a new port per destination); coturn offered as STUN and TURN, only its relay gets through',
};

/** Where the viewers run: one shared browser on loopback, or shaped namespaces of their own. */
export type Stage = { kind: 'loopback'; browser: Browser } | ShapedStage;
export interface ShapedStage {
  kind: 'shaped';
  networks: ViewerNetworks;
  profile: NetworkProfile;
  bitrateBitsPerS: number;
  nat: NatMode | null;
  turn: TurnServer | null;
}

/** The stage for a run: with a profile, shaped namespaces (and coturn for NATs); else one Chromium on loopback. */
export async function openStage(profile: NetworkProfile | null, level: number | undefined, nat: NatMode | null, log: (line: string) => void): Promise<Stage> {
  if (!profile) return { kind: 'loopback', browser: await launchSwarmBrowser() };
  const bitrateBitsPerS = sampleStreamBitrate(level);
  const networks = await ViewerNetworks.create({ log });
  const stage: ShapedStage = { kind: 'shaped', networks, profile, bitrateBitsPerS, nat, turn: null };
  log(`network ${profile.name}: ${profile.description}; uplink multiples of ${bitrateBitsPerS / 1000} kbit/s`);
  try {
    if (nat) {
      stage.turn = await startTurnServer({ host: networks.hubAddress, allowedPeerRange: '198.18.0.0-198.19.255.255', loopbackPeers: false });
      log(`NAT ${nat}: ${natDescriptions[nat]}; coturn on ${stage.turn.host}:${stage.turn.port}`);
    }
  } catch (error) {
    await closeStage(stage);
    throw error;
  }
  return stage;
}

export async function closeStage(stage: Stage | null): Promise<void> {
  if (stage?.kind === 'loopback') await stage.browser.close().catch(() => {});
  if (stage?.kind === 'shaped') {
    await stage.turn?.close();
    await stage.networks.destroy();
  }
}

export function iceServersOf(stage: Stage): RTCIceServerLike[] {
  if (stage.kind !== 'shaped' || !stage.turn || !stage.nat) return [];
  return stage.nat === 'turn' ? stage.turn.turnServers() : stage.turn.stunServers();
}

export const hubHost = (stage: Stage) => (stage.kind === 'shaped' ? stage.networks.hubAddress : undefined);

/**
 * The loopback stage's viewer pages: a context of the shared Chromium each, and a Firefox of its
 * own for each Firefox viewer (Firefox throttles the timers and holds back the media of tabs in
 * the background), started ahead of its join: a Firefox takes seconds to start on a busy machine.
 */
export class LoopbackPages {
  private readonly firefoxes = new Map<number, Promise<PuppeteerBrowser>>();

  constructor(
    private readonly stage: Extract<Stage, { kind: 'loopback' }>,
    private readonly browserOf: (index: number) => BrowserName,
  ) {}

  /** Starts the Firefox of every Firefox viewer among 0 to count - 1, one after another; false: there is none. */
  async startAhead(count: number, aborted: () => boolean, log: (line: string) => void): Promise<boolean> {
    const firefoxViewers = [...Array(count).keys()].filter((index) => this.browserOf(index) === 'firefox');
    if (firefoxViewers.length === 0) return false;
    log(`  starting ${firefoxViewers.length} Firefox browsers, one per Firefox viewer`);
    for (const index of firefoxViewers) if (!aborted()) await this.firefox(index).catch(() => {});
    return true;
  }

  /** Viewer `index`'s page (its Firefox started now if not ahead); `browser` overrides its browser. */
  async page(index: number, browser = this.browserOf(index)): Promise<ViewerPage> {
    if (browser === 'chromium') return chromiumViewerBrowser(this.stage.browser, { ownBrowser: false }).newPage();
    const firefox = await this.firefox(index);
    return firefoxViewerBrowser(firefox).newPage();
  }

  /** Closes every Firefox started here (those of viewers still watching, or that never joined). */
  async close(): Promise<void> {
    await Promise.all([...this.firefoxes.values()].map((launched) => launched.then((firefox) => firefox.close()).catch(() => {})));
  }

  private firefox(index: number): Promise<PuppeteerBrowser> {
    let launched = this.firefoxes.get(index);
    if (!launched) {
      launched = launchFirefox();
      this.firefoxes.set(index, launched);
    }
    return launched;
  }
}

/** One viewer of a shaped run: its namespace, the browser in it, and what its link carried. */
export interface ViewerSlot {
  namespace: ViewerNamespace;
  browser: ViewerBrowser;
  linkRecord: ViewerLinkRecord;
}

/** A shaped run's viewer slots, by viewer index: made before a viewer joins, sampled while it plays. */
export class ViewerSlots {
  private readonly slots = new Map<number, ViewerSlot>();
  /** Epoch ms the run's clock started at: link samples are in seconds since then. */
  private startedAtMs = Date.now();
  /** Counts the viewers' uplinks by class (countUplinks), from their namespaces' making on. */
  private ledger: UplinkLedger | null = null;

  constructor(
    private readonly stage: ShapedStage,
    private readonly pagesUrl: string,
    /** The browser viewer `index` plays in (hostile pages, index 1000 on, are Chromium). */
    private readonly browserOf: (index: number) => BrowserName = () => 'chromium',
  ) {}

  get(index: number): ViewerSlot | undefined {
    return this.slots.get(index);
  }

  /** Viewer `index`'s slot, made now (namespace, shaped link, browser) if it has none yet. */
  async slot(index: number): Promise<ViewerSlot> {
    const existing = this.slots.get(index);
    if (existing) return existing;
    const { networks, profile, bitrateBitsPerS, nat } = this.stage;
    const link = viewerLink(profile, index, bitrateBitsPerS);
    const namespace = await networks.add(link, nat ? natKinds[nat] : 'none');
    if (index < 1000) await this.ledger?.add(index, namespace.name);
    const browser = await this.launch(namespace, index);
    const counted = networks.counters()[namespace.index];
    const tS = Math.max(0, (Date.now() - this.startedAtMs) / 1000);
    const linkRecord: ViewerLinkRecord = { id: `v${index}`, address: namespace.address, link, samples: [{ tS, upBytes: counted?.upBytes ?? 0, downBytes: counted?.downBytes ?? 0 }] };
    const slot = { namespace, browser, linkRecord };
    this.slots.set(index, slot);
    return slot;
  }

  private async launch(namespace: ViewerNamespace, index: number): Promise<ViewerBrowser> {
    const { networks } = this.stage;
    // The pages come from the hub's address, not loopback: without this the page is no secure
    // context, and has no crypto.subtle to verify segments with.
    if (index >= 1000 || this.browserOf(index) === 'chromium') {
      const args = [...SWARM_BROWSER_ARGS, `--unsafely-treat-insecure-origin-as-secure=${this.pagesUrl}`];
      return chromiumViewerBrowser(await networks.launchBrowser(namespace, { args }), { ownBrowser: true });
    }
    return firefoxViewerBrowser(await networks.launchFirefox(namespace, { 'dom.securecontext.allowlist': new URL(this.pagesUrl).hostname }));
  }

  /** The namespaces made from now on count their uplinks by class into `ledger`. */
  countUplinks(ledger: UplinkLedger): void {
    this.ledger = ledger;
  }

  /** Makes the slots of viewers 0 to count - 1, one after another (their joins then keep the schedule). */
  async startAhead(count: number, aborted: () => boolean, log: (line: string) => void): Promise<boolean> {
    log(`  starting ${count} browsers, each in its own network namespace`);
    for (let index = 0; index < count && !aborted(); index += 1) await this.slot(index);
    return true;
  }

  /** The run's clock starts at `startedAtMs`: what every link carried until now is its zero. */
  start(startedAtMs: number): void {
    this.startedAtMs = startedAtMs;
    const counters = this.stage.networks.counters();
    for (const slot of this.slots.values()) {
      const counted = counters[slot.namespace.index]!;
      slot.linkRecord.samples = [{ tS: 0, upBytes: counted.upBytes, downBytes: counted.downBytes }];
    }
  }

  /** Samples every link but those of viewers that left (idle from then on). */
  sample(hasLeft: (index: number) => boolean): void {
    const counters = this.stage.networks.counters();
    const tS = Math.round((Date.now() - this.startedAtMs) / 100) / 10;
    for (const [index, slot] of this.slots) {
      if (hasLeft(index)) continue;
      const counted = counters[slot.namespace.index]!;
      slot.linkRecord.samples.push({ tS, upBytes: counted.upBytes, downBytes: counted.downBytes });
    }
  }

  /** The network as the report gives it. */
  record(): NetworkRecord {
    const { profile, bitrateBitsPerS, nat } = this.stage;
    return {
      profile: profile.name,
      description: profile.description,
      bitrateBitsPerS,
      uplinkQueueMs: profile.uplinkQueueMs,
      downlinkQueueMs: DOWNLINK_QUEUE_MS,
      latencyModel: LATENCY_MODEL,
      nat: nat ? natDescriptions[nat] : null,
      viewers: [...this.slots.values()].map((slot) => slot.linkRecord),
    };
  }

  /** Closes every slot's browser and removes its namespace. */
  async close(): Promise<void> {
    for (const slot of this.slots.values()) {
      await slot.browser.close().catch(() => {});
      await this.stage.networks.remove(slot.namespace);
    }
  }
}

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
    // Real segment bytes for the hostile peers' wrong-bytes answers, without asking the origin.
    '/media/': defaultMediaDir(),
  };
}

/**
 * Muted; and performance.memory live and exact (by default Chromium rounds it and refreshes it
 * every 20 minutes: no heap curve for a soak).
 */
const SWARM_BROWSER_ARGS = ['--mute-audio', '--enable-precise-memory-info'];

export async function launchSwarmBrowser(): Promise<Browser> {
  const launch = chromiumLaunchOptions();
  return chromium.launch({ ...launch, args: [...launch.args, ...SWARM_BROWSER_ARGS] });
}

/** The bitrate a profile's uplink multiples apply to: the pinned rendition's, else the top one's. */
export function sampleStreamBitrate(level = -1): number {
  const renditions = sampleMediaSpec.renditions;
  const rendition = renditions[level >= 0 && level < renditions.length ? level : renditions.length - 1]!;
  return (rendition.videoKbps + sampleMediaSpec.audioKbps) * 1000;
}

/** git HEAD of this checkout, "+dirty" with uncommitted changes to tracked files; null outside one. */
export function shoalCommit(): string | null {
  const root = repoPath('.');
  const head = spawnSync('git', ['-C', root, 'rev-parse', 'HEAD'], { encoding: 'utf8' });
  if (head.status !== 0) return null;
  const status = spawnSync('git', ['-C', root, 'status', '--porcelain', '--untracked-files=no'], { encoding: 'utf8' });
  return `${head.stdout.trim()}${status.stdout.trim() ? '+dirty' : ''}`;
}

/** The tracker's own /stats.json totals: proof that the engine's peers met through it. */
export async function readTrackerStats(httpUrl: string): Promise<Record<string, unknown> | null> {
  try {
    const response = await fetch(`${httpUrl}/stats.json`, { signal: AbortSignal.timeout(3_000) });
    const stats = (await response.json()) as { peers?: unknown; swarms?: unknown; totals?: unknown };
    return { peers: stats.peers, swarms: stats.swarms, totals: stats.totals };
  } catch {
    return null;
  }
}
