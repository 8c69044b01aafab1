// One simulation run: the unmodified @shoal/core engine in every simulated viewer, wired to the
// virtual clock, the flow network, the simulated tracker and origin, and driven by the player
// model. Returns the raw records; sim-report.ts turns them into the swarm report.
import { ShoalEngine, streamKey, swarmIdFromUrl, type EngineOptionsInput, type EngineStats } from '@shoal/core';
import {
  BROWSER_WIRE_OVERHEAD, ChannelLedger, DEFAULT_PLAYER_PARAMS, FlowNetwork, PlayerModel, Prng, SimHost, SimOrigin, VirtualClock,
  type LinkCapacity, type WireOverhead, type PlayerParams, type StreamSpec, type ViewerRecord,
} from './kit.js';
import { networkProfile, viewerUploads } from '@shoal/e2e/network-profiles';
import { simLink, simScenario, type SimScenario } from './sim-scenarios.js';
import { SimSegmentStore } from './sim-store.js';
import { DEFAULT_SIGNALING_PARAMS, SimTracker } from './sim-tracker.js';
import { UplinkTracker, type UplinkRecord } from './uplink-tracker.js';
import type { SimProgress } from './progress.js';

export interface SimulationConfig {
  scenario: string;
  peers: number;
  network: string;
  durationS: number;
  seed: number;
  /** Every viewer plays with P2P off: the HTTP-only baseline. */
  httpOnly: boolean;
  bitrateKbps: number;
  segmentDurationS: number;
  /** Passed to every P2P viewer's engine (over the defaults). */
  engineOptions: EngineOptionsInput;
  /** Offload-over-time bucket, s. */
  bucketS: number;
  /** Viewers join over this many seconds instead of the scenario's (the browser swarm's schedule: peers - 1). */
  joinSpreadS?: number;
  /** What the wire carries besides payload (kit/wire-overhead.ts); undefined: payload only, the model before 2026-12-02. */
  wireOverhead: WireOverhead | undefined;
  /** Replaces a viewer's drawn access link (tests give one viewer a particular uplink). */
  linkOverride?: (viewerIndex: number, drawn: LinkCapacity) => LinkCapacity;
  /** Called before the run starts: tests inject faults through it. */
  setup?: (simulation: Simulation) => void;
  /** Progress, every 250 ms of virtual time. */
  onProgress?: (progress: SimProgress) => void;
}

export const DEFAULT_SIMULATION: Omit<SimulationConfig, 'scenario' | 'peers'> = {
  network: 'unlimited',
  durationS: 600,
  seed: 1,
  httpOnly: false,
  // The sample stream's 360p rendition (e2e/src/sample-media.ts): 620 kbit/s video + 64 audio.
  bitrateKbps: 684,
  segmentDurationS: 2,
  engineOptions: {},
  bucketS: 10,
  wireOverhead: BROWSER_WIRE_OVERHEAD,
};

/** How often, in virtual time, a run reports its progress (the meter prints at most every few wall seconds). */
const PROGRESS_STEP_MS = 250;

export interface Viewer {
  index: number;
  peerId: string;
  host: SimHost;
  engine: ShoalEngine;
  player: PlayerModel;
  /** The engine's stats when the viewer left, or at the end of the run. */
  stats: EngineStats | undefined;
}

export interface SimulationResult {
  config: Omit<SimulationConfig, 'setup' | 'onProgress' | 'linkOverride'>;
  scenario: SimScenario;
  viewers: ViewerRecord[];
  viewerStats: EngineStats[];
  origin: SimOrigin;
  ledger: ChannelLedger;
  /** Segment bytes handed to players per bucket. */
  deliveredByBucket: number[];
  tracker: { announces: number; offersForwarded: number };
  /** Each viewer's access link, as drawn (or overridden). */
  links: LinkCapacity[];
  /** Each viewer's uplink bytes besides payload and control, by the wire-overhead model (0 without it). */
  wireOverhead: { dataChannelBytes: number; tcpAckBytes: number }[];
  /** For the account of the uplinks after the joins (sim-report.ts). */
  uplink: UplinkRecord;
  wallMs: number;
  events: number;
}

export class Simulation {
  readonly clock = new VirtualClock();
  readonly network: FlowNetwork;
  readonly ledger = new ChannelLedger();
  readonly origin: SimOrigin;
  readonly tracker: SimTracker;
  readonly scenario: SimScenario;
  readonly viewers: Viewer[] = [];
  readonly active = new Set<Viewer>();
  readonly deliveredByBucket: number[] = [];
  readonly uplink: UplinkTracker;
  private readonly viewerByHost = new Map<SimHost, number>();
  private readonly prng: Prng;
  private readonly hostPrng: Prng;
  private readonly playerParams: PlayerParams;
  private readonly p2pOff: Set<number>;
  private readonly streamKey: string;

  constructor(readonly config: SimulationConfig) {
    this.network = new FlowNetwork(this.clock, config.wireOverhead);
    const scenario = simScenario(config.scenario);
    this.scenario = config.joinSpreadS === undefined ? scenario : { ...scenario, joinSpreadS: config.joinSpreadS };
    const swarm = this.scenario.swarm;
    this.prng = new Prng(config.seed);
    this.hostPrng = this.prng.fork(1);
    // The key the hls.js adapter builds for this rendition (so elections hash what a browser's would).
    this.streamKey = streamKey(swarmIdFromUrl(`sim://origin/${swarm.name}/index.m3u8`), { bandwidth: config.bitrateKbps * 1000 });
    const segments = Math.ceil(config.durationS / config.segmentDurationS) + swarm.liveWindowSize + 2;
    const spec: StreamSpec = {
      kind: swarm.stream,
      renditions: [{ streamKey: this.streamKey, bitrateBitsPerS: config.bitrateKbps * 1000 }],
      segmentDurationS: config.segmentDurationS,
      sizeJitter: 0.15,
      liveWindowSize: swarm.liveWindowSize,
      segmentCount: segments,
    };
    this.origin = new SimOrigin(this.clock, this.network, spec, { latencyMs: 15, perConnectionBytesPerS: Infinity }, this.prng.fork(2), config.bucketS * 1000);
    const maxPeers = config.engineOptions.maxPeers ?? DEFAULT_SIGNALING_PARAMS.maxPeers;
    this.tracker = new SimTracker(this.clock, this.network, this.ledger, { ...DEFAULT_SIGNALING_PARAMS, maxPeers }, this.prng.fork(3));
    this.playerParams = {
      ...DEFAULT_PLAYER_PARAMS,
      liveSyncDurationCount: swarm.liveSyncDurationCount,
      maxBufferLengthS: swarm.maxBufferLength,
      startupBufferS: config.segmentDurationS,
    };
    this.uplink = new UplinkTracker(this.clock, (host) => this.viewerByHost.get(host), this.scenario.joinSpreadS * 1000);
    this.ledger.onDone = (from, to, sequence) => this.uplink.done(from, to, sequence);
    this.p2pOff = new Set<number>();
    const offCount = Math.round(swarm.p2pOffFraction * config.peers);
    for (let k = 0; k < offCount; k++) this.p2pOff.add(Math.floor(((k + 0.5) * config.peers) / offCount));
  }

  /** A new viewer joins now. */
  spawn(p2p: boolean): Viewer {
    const index = this.viewers.length;
    const profile = networkProfile(this.config.network);
    const drawn = simLink(profile, index, this.config.bitrateKbps * 1000, this.hostPrng);
    const capacity = this.config.linkOverride ? this.config.linkOverride(index, drawn) : drawn;
    const peerId = this.prng.peerId();
    const host = new SimHost(peerId, capacity);
    const engineOptions: EngineOptionsInput = p2p
      ? { swarmId: `sim://origin/${this.scenario.swarm.name}/index.m3u8`, ...this.config.engineOptions, ...(viewerUploads(profile, index) ? {} : { upload: false }) }
      : { p2pDownload: false, upload: false };
    const store = new SimSegmentStore(64 * 1024 * 1024, (_key, sequence) => this.origin.content(sequence));
    const engine = new ShoalEngine(engineOptions, {
      clock: this.clock,
      http: this.origin.client(host),
      store,
      ...(p2p ? { signaling: this.tracker.signaling(host, peerId) } : {}),
    });
    const bucketMs = this.config.bucketS * 1000;
    const player = new PlayerModel(this.clock, this.origin, engine, this.playerParams, {
      index,
      p2p,
      originOneWayMs: capacity.latencyMs + 15,
      feedPhaseMs: this.prng.between(0, this.playerParams.timeupdateMs),
      onDelivered: (bytes) => {
        const bucket = Math.floor(this.clock.now() / bucketMs);
        while (this.deliveredByBucket.length <= bucket) this.deliveredByBucket.push(0);
        this.deliveredByBucket[bucket]! += bytes;
      },
    });
    const viewer: Viewer = { index, peerId, host, engine, player, stats: undefined };
    this.viewerByHost.set(host, index);
    this.viewers.push(viewer);
    this.active.add(viewer);
    return viewer;
  }

  /** The viewer leaves (closes the tab): its engine is destroyed, its peers see the channels close. */
  leave(viewer: Viewer): void {
    if (!this.active.has(viewer)) return;
    this.active.delete(viewer);
    viewer.stats = viewer.engine.getStats();
    viewer.player.stop();
  }

  private scheduleJoins(): void {
    const { peers, httpOnly } = this.config;
    const spreadMs = this.scenario.joinSpreadS * 1000;
    for (let i = 0; i < peers; i++) {
      const atMs = peers > 1 ? (i * spreadMs) / peers + this.prng.between(0, spreadMs / peers) : 0;
      const p2p = !httpOnly && !this.p2pOff.has(i);
      this.clock.at(atMs, () => this.spawn(p2p));
    }
    // The report's account of the uplinks starts when the joins end (after the last one's first instant).
    this.clock.at(spreadMs, () => this.clock.setTimeout(() => {
      for (const viewer of this.active) this.uplink.baseline[viewer.index] = viewer.engine.getStats();
    }, 0));
    const churn = this.scenario.churn;
    if (churn) {
      const churnPrng = this.prng.fork(4);
      const tick = () => {
        const candidates = [...this.active];
        const count = Math.max(1, Math.round(churn.fraction * peers));
        for (let k = 0; k < count && candidates.length > 0; k++) {
          const [leaving] = candidates.splice(churnPrng.index(candidates.length), 1);
          this.leave(leaving!);
          this.spawn(leaving!.player.record.p2p);
        }
        this.clock.setTimeout(tick, churn.everyS * 1000);
      };
      this.clock.at(spreadMs + churn.everyS * 1000, tick);
    }
  }

  async run(): Promise<SimulationResult> {
    const started = performance.now();
    this.scheduleJoins();
    this.config.setup?.(this);
    const endMs = this.config.durationS * 1000;
    // Stopping the clock at a whole second changes nothing: no event runs there that would not have.
    for (let t = PROGRESS_STEP_MS; ; t += PROGRESS_STEP_MS) {
      await this.clock.runUntil(Math.min(t, endMs));
      this.config.onProgress?.({ simulatedS: this.clock.now() / 1000, durationS: this.config.durationS, wallMs: performance.now() - started, events: this.clock.eventsRun });
      if (t >= endMs) break;
    }
    for (const viewer of this.active) {
      viewer.player.finish();
      viewer.stats = viewer.engine.getStats();
    }
    const { setup: _setup, onProgress: _progress, linkOverride: _link, ...config } = this.config;
    return {
      config,
      scenario: this.scenario,
      viewers: this.viewers.map((viewer) => viewer.player.record),
      viewerStats: this.viewers.map((viewer) => viewer.stats!),
      origin: this.origin,
      ledger: this.ledger,
      deliveredByBucket: this.deliveredByBucket,
      tracker: { announces: this.tracker.announces, offersForwarded: this.tracker.offersForwarded },
      links: this.viewers.map((viewer) => viewer.host.capacity),
      wireOverhead: this.viewers.map(({ host }) => ({ dataChannelBytes: host.overheadBytes, tcpAckBytes: host.tcpAckBytes })),
      uplink: this.uplink.record(),
      wallMs: performance.now() - started,
      events: this.clock.eventsRun,
    };
  }

  /** Destroys every engine still running (tests call it to free timers and memory). */
  dispose(): void {
    for (const viewer of [...this.active]) this.leave(viewer);
  }
}

export function runSimulation(config: Partial<SimulationConfig> & Pick<SimulationConfig, 'scenario' | 'peers'>): Promise<SimulationResult> {
  return new Simulation({ ...DEFAULT_SIMULATION, ...config }).run();
}
