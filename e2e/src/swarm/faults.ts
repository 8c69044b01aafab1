// Faults a swarm run can go through (--fault): the tracker vanishing and coming back, viewers'
// browsers crashing while they upload, the origin failing in bursts, hostile peers. Each runs as a
// phase after the viewers joined and warmed up; several run one after another. The same schedule
// runs for every engine of a comparison, so the HTTP-only baseline plays under the same faults.
// This module drives the phases and records what happened; report-faults.ts turns it into figures.
import type { Origin } from '../origin.js';
import { joinOffsetsMs, type Scenario } from './scenarios.js';
import type { ViewerSession } from './viewer-session.js';

export type FaultName = 'tracker-outage' | 'peer-crash' | 'origin-errors' | 'hostile-peers';
export const faultNames: readonly FaultName[] = ['tracker-outage', 'peer-crash', 'origin-errors', 'hostile-peers'];

export type HostileBehaviour = 'silent' | 'trickle' | 'flood' | 'liar' | 'wrong-bytes';
export const hostileBehaviours: readonly HostileBehaviour[] = ['silent', 'trickle', 'flood', 'liar', 'wrong-bytes'];

export interface FaultOptions {
  faults: FaultName[];
  /** tracker-outage: seconds the tracker stays away (default 30). */
  outageS?: number;
  /** hostile-peers: one hostile page per behaviour listed (default: all five). */
  hostile?: HostileBehaviour[];
  /** hostile-peers: seconds the hostile peers stay (default 40). */
  hostileS?: number;
  /** peer-crash: how many viewers crash, 15 s apart (default 2). */
  crashes?: number;
}

/** Warm-up after the last join before the first fault. */
export const FAULT_WARMUP_S = 10;
/** After the tracker returns, how long the phase waits (at most) for the swarm to meet again. */
const RECOVERY_WATCH_S = 25;
const CRASH_GAP_S = 15;
const ORIGIN_BURST_S = 6;
const ORIGIN_QUIET_S = 8;
const HOSTILE_PHASE_S = 40;

/** Seconds one fault's phase lasts (tracker-outage: at most; it ends once the swarm met again). */
export function faultPhaseS(fault: FaultName, options: Omit<FaultOptions, 'faults' | 'hostile'>): number {
  switch (fault) {
    case 'tracker-outage':
      return (options.outageS ?? 30) + RECOVERY_WATCH_S;
    case 'peer-crash':
      return (options.crashes ?? 2) * CRASH_GAP_S;
    case 'origin-errors':
      return 2 * (2 * ORIGIN_BURST_S + 2 * ORIGIN_QUIET_S);
    case 'hostile-peers':
      return options.hostileS ?? HOSTILE_PHASE_S;
  }
}

/** Seconds a run needs for its faults: the joins, the warm-up, every phase and a few seconds after. */
export function faultsDurationS(scenario: Scenario, options: { faults?: FaultOptions; peers: number; durationS: number }): number {
  const faults = options.faults?.faults ?? [];
  if (faults.length === 0) return 0;
  const lastJoinS = (joinOffsetsMs(scenario, options.peers, options.durationS).at(-1) ?? 0) / 1000;
  return lastJoinS + FAULT_WARMUP_S + faults.reduce((sum, fault) => sum + faultPhaseS(fault, options.faults!), 0) + 5;
}

/** A hostile page (e2e/pages/hostile-peer.js) as the runner sees it. */
export interface HostileSession {
  behaviour: HostileBehaviour;
  snapshot(): Promise<HostileSnapshot | null>;
  close(): Promise<void>;
}

export interface HostileSnapshot {
  behaviour: HostileBehaviour;
  peerId: string | null;
  startedAtMs: number;
  joinedSwarms: number;
  error: string | null;
  sentMessages: number;
  sentBytes: number;
  /** Per honest peer that connected to it. */
  peers: Array<{
    id: string;
    connectedAtMs: number;
    closedAtMs: number | null;
    closeReason: string | null;
    requests: number;
    firstRequestAtMs: number | null;
    lastRequestAtMs: number | null;
    /** Payload bytes this honest peer uploaded to the hostile one. */
    dataBytesReceived: number;
    connections: number;
  }>;
}

/** What the runner lets a fault do. */
export interface FaultHost {
  startedAtMs: number;
  origin: Origin | null;
  /** Viewers that have not left. */
  activeViewers(): ViewerSession[];
  /** A new viewer joins (the next index); undefined if it could not. */
  join(): Promise<ViewerSession | undefined>;
  /** SIGKILLs the tracker process (no goodbye to anyone); false when the run has no tracker of its own. */
  killTracker(): Promise<boolean>;
  /** Starts the tracker again on the same address. */
  restartTracker(): Promise<void>;
  /** The tracker's /stats.json peer count, null when unreachable. */
  trackerPeers(): Promise<number | null>;
  openHostile(behaviour: HostileBehaviour): Promise<HostileSession>;
  log(line: string): void;
}

export interface FaultEvent {
  /** Seconds since the run started. */
  tS: number;
  what: string;
}

export interface TrackerOutageRecord {
  downAtS: number;
  upAtS: number | null;
  /** P2P bytes the viewers received while the tracker was away (peers already connected kept sharing). */
  p2pBytesDuringOutage: number;
  /** A viewer that joined while the tracker was away: when it first got P2P bytes, s after the tracker returned. */
  lateJoiner: { id: string; joinedAtS: number; firstP2pAfterReturnS: number | null } | null;
  /** Seconds after the tracker returned until it counted every active P2P viewer again (null: not within the watch). */
  trackerPeersBackS: number | null;
  activeP2pViewers: number;
}

export interface CrashRecord {
  id: string;
  atS: number;
  /** The victim's upload rate over the seconds before the crash, bytes/s. */
  uploadingBytesPerS: number;
  replacement: string | null;
}

export interface OriginBurstRecord {
  kind: '5xx' | 'slow';
  fromS: number;
  toS: number;
  faults: string;
}

export interface FaultRecord {
  faults: FaultName[];
  events: FaultEvent[];
  trackerOutage: TrackerOutageRecord | null;
  crashes: CrashRecord[];
  originBursts: OriginBurstRecord[];
  originInjectedErrors: number | null;
  hostile: Array<HostileSnapshot & { phaseFromS: number; phaseToS: number; honestUploadedDuringPhase: number }>;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Runs the faults one after another from `fromMs`; `tick` is called from the runner's loop. */
export class FaultDriver {
  private readonly record: FaultRecord;
  private phase: Promise<void> | null = null;
  private failed: Error | null = null;

  constructor(
    private readonly host: FaultHost,
    private readonly options: FaultOptions,
    private readonly fromMs: number,
  ) {
    this.record = { faults: options.faults, events: [], trackerOutage: null, crashes: [], originBursts: [], originInjectedErrors: null, hostile: [] };
  }

  /** Starts the phases once their time has come; they run alongside the runner's own loop. */
  tick(nowMs: number): void {
    if (this.phase || nowMs < this.fromMs) return;
    this.phase = this.runPhases().catch((error: Error) => {
      this.failed = error;
      this.host.log(`fault driver: ${error.message}`);
    });
  }

  /** Waits for a phase under way (the run is over), restores the origin, and returns the record. */
  async finish(): Promise<FaultRecord> {
    this.stopped = true;
    await this.phase;
    this.host.origin?.setFaults({});
    if (this.host.origin) this.record.originInjectedErrors = this.host.origin.stats().injectedErrors;
    if (this.failed) this.event(`fault driver failed: ${this.failed.message}`);
    return this.record;
  }

  private stopped = false;
  private tS = () => Math.round((Date.now() - this.host.startedAtMs) / 100) / 10;
  private event(what: string) {
    this.record.events.push({ tS: this.tS(), what });
    this.host.log(`  fault: ${what}`);
  }
  /** Sleeps, but returns early when the run is over. */
  private async wait(ms: number): Promise<void> {
    const until = Date.now() + ms;
    while (!this.stopped && Date.now() < until) await sleep(Math.min(250, until - Date.now()));
  }

  private async runPhases(): Promise<void> {
    for (const fault of this.options.faults) {
      if (this.stopped) return;
      this.event(`${fault} begins`);
      if (fault === 'tracker-outage') await this.trackerOutage();
      if (fault === 'peer-crash') await this.peerCrash();
      if (fault === 'origin-errors') await this.originErrors();
      if (fault === 'hostile-peers') await this.hostilePeers();
      this.event(`${fault} ends`);
    }
  }

  private async p2pBytesNow(): Promise<number> {
    const viewers = this.host.activeViewers();
    const snapshots = await Promise.all(viewers.map((viewer) => viewer.sample()));
    return snapshots.reduce((sum, snapshot) => sum + (snapshot?.p2pBytes ?? 0), 0);
  }

  private async trackerOutage(): Promise<void> {
    const outageMs = (this.options.outageS ?? 30) * 1000;
    const before = await this.p2pBytesNow();
    if (!(await this.host.killTracker())) {
      this.event('tracker-outage skipped: the run has no tracker of its own (--tracker)');
      return;
    }
    const outage: TrackerOutageRecord = { downAtS: this.tS(), upAtS: null, p2pBytesDuringOutage: 0, lateJoiner: null, trackerPeersBackS: null, activeP2pViewers: 0 };
    this.record.trackerOutage = outage;
    this.event('tracker killed (SIGKILL)');
    // A viewer arriving while the tracker is away can only meet peers once it is back.
    await this.wait(Math.min(5_000, outageMs / 3));
    const late = await this.host.join();
    if (late) {
      outage.lateJoiner = { id: late.id, joinedAtS: Math.round((late.joinedAtMs - this.host.startedAtMs) / 100) / 10, firstP2pAfterReturnS: null };
      this.event(`${late.id} joins while the tracker is away`);
    }
    await this.wait(outageMs - (this.tS() - outage.downAtS) * 1000);
    if (this.stopped) return;
    outage.p2pBytesDuringOutage = Math.max(0, (await this.p2pBytesNow()) - before);
    await this.host.restartTracker();
    outage.upAtS = this.tS();
    const upMs = Date.now();
    this.event('tracker restarted on the same address');
    outage.activeP2pViewers = this.host.activeViewers().filter((viewer) => viewer.p2p).length;
    // Poll once a second: the late joiner's first P2P bytes, and the tracker's count of its peers.
    const met = () => (outage.lateJoiner?.firstP2pAfterReturnS != null || !late?.p2p) && (outage.trackerPeersBackS !== null || outage.activeP2pViewers === 0);
    while (!this.stopped && Date.now() - upMs < RECOVERY_WATCH_S * 1000 && !met()) {
      const seconds = Math.round((Date.now() - upMs) / 100) / 10;
      if (late && outage.lateJoiner && outage.lateJoiner.firstP2pAfterReturnS === null && late.p2p) {
        const snapshot = await late.sample(2_000);
        if ((snapshot?.p2pBytes ?? 0) > 0) {
          outage.lateJoiner.firstP2pAfterReturnS = seconds;
          this.event(`${late.id} got its first P2P bytes ${seconds} s after the tracker returned`);
        }
      }
      if (outage.trackerPeersBackS === null && outage.activeP2pViewers > 0) {
        const peers = await this.host.trackerPeers();
        if (peers !== null && peers >= outage.activeP2pViewers) {
          outage.trackerPeersBackS = seconds;
          this.event(`the tracker counts ${peers} peers again (${outage.activeP2pViewers} P2P viewers) ${seconds} s after it returned`);
        }
      }
      await this.wait(1_000);
    }
  }

  private async peerCrash(): Promise<void> {
    for (let crash = 0; crash < (this.options.crashes ?? 2) && !this.stopped; crash += 1) {
      // The victim: whoever uploads most right now (two samples a second apart).
      const candidates = this.host.activeViewers();
      const first = new Map(candidates.map((viewer) => [viewer, viewer.last?.uploadedBytes ?? 0]));
      await Promise.all(candidates.map((viewer) => viewer.sample()));
      const startMs = Date.now();
      await this.wait(1_500);
      await Promise.all(candidates.map((viewer) => viewer.sample()));
      const seconds = (Date.now() - startMs) / 1000 + 1;
      let victim: ViewerSession | undefined;
      let best = -1;
      for (const viewer of candidates) {
        if (viewer.leftAtMs !== null) continue;
        const rate = ((viewer.last?.uploadedBytes ?? 0) - (first.get(viewer) ?? 0)) / seconds;
        if (rate > best) [victim, best] = [viewer, rate];
      }
      if (!victim) return;
      const atS = this.tS();
      await victim.crash();
      this.event(`${victim.id} crashed (renderer killed) while uploading ${Math.round(best / 1000)} kB/s`);
      const record: CrashRecord = { id: victim.id, atS, uploadingBytesPerS: Math.round(Math.max(0, best)), replacement: null };
      this.record.crashes.push(record);
      await this.wait(2_000);
      const replacement = await this.host.join();
      record.replacement = replacement?.id ?? null;
      await this.wait(CRASH_GAP_S * 1000 - 3_500);
    }
  }

  private async originErrors(): Promise<void> {
    const origin = this.host.origin;
    if (!origin) {
      this.event('origin-errors skipped: an external stream has no fault controls');
      return;
    }
    const bursts: Array<{ kind: OriginBurstRecord['kind']; faults: Parameters<Origin['setFaults']>[0]; describe: string }> = [
      { kind: '5xx', faults: { errorRate: 0.5 }, describe: 'half the segment requests answered 503' },
      { kind: 'slow', faults: { latencyMs: 1500, bytesPerSecond: 150_000 }, describe: '1.5 s before every response, segment bodies at 150 kB/s per connection' },
    ];
    for (let round = 0; round < 2 && !this.stopped; round += 1) {
      for (const burst of bursts) {
        const fromS = this.tS();
        origin.setFaults(burst.faults);
        this.event(`origin: ${burst.describe}`);
        await this.wait(ORIGIN_BURST_S * 1000);
        origin.setFaults({});
        this.record.originBursts.push({ kind: burst.kind, fromS, toS: this.tS(), faults: burst.describe });
        await this.wait(ORIGIN_QUIET_S * 1000);
      }
    }
  }

  private async hostilePeers(): Promise<void> {
    const behaviours = this.options.hostile ?? [...hostileBehaviours];
    const phaseFromS = this.tS();
    const uploadedBefore = this.host.activeViewers().reduce((sum, viewer) => sum + (viewer.last?.uploadedBytes ?? 0), 0);
    const sessions: HostileSession[] = [];
    for (const behaviour of behaviours) {
      try {
        sessions.push(await this.host.openHostile(behaviour));
        this.event(`a hostile peer (${behaviour}) joins`);
      } catch (error) {
        this.event(`hostile ${behaviour} could not start: ${(error as Error).message}`);
      }
    }
    await this.wait((this.options.hostileS ?? HOSTILE_PHASE_S) * 1000);
    const uploadedAfter = (await Promise.all(this.host.activeViewers().map((viewer) => viewer.sample()))).reduce((sum, snapshot) => sum + (snapshot?.uploadedBytes ?? 0), 0);
    const phaseToS = this.tS();
    for (const session of sessions) {
      const snapshot = await session.snapshot();
      if (snapshot) this.record.hostile.push({ ...snapshot, phaseFromS, phaseToS, honestUploadedDuringPhase: Math.max(0, uploadedAfter - uploadedBefore) });
      await session.close();
    }
    this.event(`hostile peers left`);
  }
}
