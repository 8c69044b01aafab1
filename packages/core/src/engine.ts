// ShoalEngine: carries out the scheduler's decisions. It owns the streams (one swarm per
// rendition) and wires each stream's rooms: its peers (peer-pool.ts), its HTTP and P2P transfers
// (transfers.ts), the player's pending loads (pending-loads.ts) and who fetches new live segments
// from the origin (live-edge-seeding.ts). It asks scheduler.plan() what to do whenever state
// changes, and on a timer while work is in flight.
import { ShoalError } from './errors.js';
import { SegmentVerifier, webCryptoSha256, type Sha256 } from './integrity.js';
import { createLogger } from './logger.js';
import { resolveOptions, type EngineOptions, type EngineOptionsInput } from './options.js';
import { SegmentState } from './peer-protocol.js';
import { PeerPool, type PeerPoolOwner } from './peer-pool.js';
import { LiveEdgeSeeding } from './live-edge-seeding.js';
import { EngineEvents, type EngineEventName, type EngineListener, type EngineStats, type StreamStats } from './engine-events.js';
import { PendingLoads, type SegmentLoad, type Waiter } from './pending-loads.js';
import { OriginThroughput, Transfers } from './transfers.js';
import { UploadGovernor } from './upload-governor.js';
import {
  PREFETCH_STORE_SHARE,
  estimatedSegmentBytes,
  nextPlanMs,
  parkedStep,
  plan,
  playbackAtRisk,
  playbackWantsPlan,
  prefetchWindow,
  resolveLatencyMode,
  segmentDeadlineMs,
  windowsFor,
  type EffectiveLatencyMode,
  type ModeWindows,
  type SegmentPlan,
} from './scheduler.js';
import { MemorySegmentStore } from './segment-store.js';
import type {
  Clock,
  HttpClient,
  PlaybackState,
  SegmentRef,
  SegmentStore,
  Signaling,
  TimerId,
} from './types.js';

const log = createLogger('shoal:core:engine');

/** Bitrate assumed for a segment's size before any segment of its stream was measured: 2 Mbit/s. */
const DEFAULT_BYTES_PER_S = 250_000;

export interface EngineDeps {
  clock: Clock;
  http: HttpClient;
  /** Finds peers. Without it the engine is an HTTP loader with stats. The engine destroys it on destroy(). */
  signaling?: Signaling;
  /** Default: a MemorySegmentStore of options.storeBytesLimit. */
  store?: SegmentStore;
  /** SHA-256 for the integrity manifest. Default: Web Crypto (browsers, Node >= 20). */
  sha256?: Sha256;
}

export interface StreamRegistration {
  streamKey: string;
  isLive: boolean;
  /** The playlist's segments, as of this (re)load. */
  segments: SegmentRef[];
}

interface Stream {
  key: string;
  isLive: boolean;
  refs: Map<number, SegmentRef>;
  /** By start time, for window lookups. */
  ordered: SegmentRef[];
  registered: boolean;
  pool: PeerPool;
  transfers: Transfers;
  waiters: PendingLoads;
  /** Live-edge seeding: who fetches new live segments from the origin. */
  seeding: LiveEdgeSeeding;
  bytesPerS: number;
  stats: StreamStats;
}

export class ShoalEngine {
  readonly options: EngineOptions;
  private readonly clock: Clock;
  private readonly http: HttpClient;
  private readonly signaling: Signaling | undefined;
  private readonly store: SegmentStore;
  private readonly verifier: SegmentVerifier;
  private readonly governor: UploadGovernor;
  private readonly streams = new Map<string, Stream>();
  private readonly banned = new Set<string>();
  private readonly events = new EngineEvents();
  private readonly emit = this.events.emit;
  private readonly windowsByMode = new Map<EffectiveLatencyMode, ModeWindows>();
  private activeKey: string | undefined;
  private previousKey: string | undefined;
  private playback: PlaybackState | undefined;
  private playbackAtMs = 0;
  /** When a playback report last asked for a plan. */
  private playbackPlanMs = -Infinity;
  private readonly throughput: OriginThroughput;
  private tickTimer: TimerId | undefined;
  private tickAtMs = Infinity;
  private destroyed = false;

  constructor(options: EngineOptionsInput, deps: EngineDeps) {
    this.options = resolveOptions(options);
    this.clock = deps.clock;
    this.http = deps.http;
    this.signaling = deps.signaling;
    this.store = deps.store ?? new MemorySegmentStore(this.options.storeBytesLimit);
    this.throughput = new OriginThroughput(this.options.initialHttpThroughputBytesPerS);
    this.governor = new UploadGovernor(this.clock, this.options.uploadRateLimitBytesPerS, this.options.initialUploadPaceBytesPerS);
    this.verifier = new SegmentVerifier(
      this.options.validateSegment,
      this.options.integrityManifestUrl,
      this.http,
      this.clock,
      deps.sha256 ?? webCryptoSha256,
      (message) => this.emit('warning', { message }),
    );
    this.store.onEvict((streamKey, sequence) => this.streams.get(streamKey)?.pool.announce(sequence, SegmentState.none));
  }

  on<Name extends EngineEventName>(name: Name, listener: EngineListener<Name>): this {
    this.events.on(name, listener);
    return this;
  }

  off<Name extends EngineEventName>(name: Name, listener: EngineListener<Name>): this {
    this.events.off(name, listener);
    return this;
  }

  /** Call on every playlist (re)load of a rendition. */
  registerStream(registration: StreamRegistration): void {
    this.assertAlive();
    const stream = this.stream(registration.streamKey);
    const wasRegistered = stream.registered;
    stream.registered = true;
    stream.isLive = registration.isLive;
    const fresh: number[] = [];
    const refs = new Map<number, SegmentRef>();
    for (const ref of registration.segments) {
      if (!stream.refs.has(ref.sequence)) fresh.push(ref.sequence);
      refs.set(ref.sequence, ref);
    }
    // Keep segments that slid out of a live playlist while a transfer or a load still needs them.
    for (const [sequence, ref] of stream.refs) {
      if (!refs.has(sequence) && (stream.transfers.has(sequence) || stream.waiters.has(sequence))) refs.set(sequence, ref);
    }
    stream.refs = refs;
    stream.ordered = [...refs.values()].sort((a, b) => a.startS - b.startS);
    stream.seeding.forget((sequence) => refs.has(sequence), stream.ordered[0]?.sequence ?? 0);
    stream.transfers.forget((sequence) => refs.has(sequence));
    if (stream.isLive && wasRegistered) {
      stream.seeding.elect(fresh, this.signaling?.localPeerId, [...stream.pool.peers.keys()], stream.pool.swarmSize, this.clock.now());
    }
    if (this.activeKey === undefined) this.setActiveStream(stream.key);
    this.scheduleTick(0);
  }

  /** The rendition the player plays now: its swarm is joined; the previous one is kept, older ones are left. */
  setActiveStream(streamKey: string): void {
    this.assertAlive();
    if (streamKey === this.activeKey) return;
    if (this.activeKey !== undefined) this.previousKey = this.activeKey;
    this.activeKey = streamKey;
    log('active stream', streamKey);
    const stream = this.stream(streamKey);
    stream.pool.join(this.signaling);
    for (const other of this.streams.values()) {
      if (other.key !== this.activeKey && other.key !== this.previousKey) other.pool.leave();
    }
    this.scheduleTick(0);
  }

  setPlayback(state: PlaybackState): void {
    if (this.destroyed) return;
    const now = this.clock.now();
    const wantsPlan = playbackWantsPlan(this.playback, this.playbackAtMs, state, now, this.playbackPlanMs);
    this.playback = state;
    this.playbackAtMs = now;
    this.governor.setYielding(playbackAtRisk(state));
    // Renditions share the media timeline: what is behind the playhead is behind it in every rendition.
    for (const key of this.streams.keys()) this.store.setPlayhead(key, state.positionS);
    if (wantsPlan) {
      this.playbackPlanMs = now;
      this.scheduleTick(0);
    }
  }

  /**
   * Origin throughput measured over this engine's own HTTP transfers (player loads, live-edge
   * seeding, Range resumes), bytes/s, or undefined before the first transfer large enough to time.
   * What an HTTP-only player would see: adapters report P2P deliveries to the player's ABR at this rate.
   */
  get measuredHttpThroughputBytesPerS(): number | undefined {
    return this.throughput.measuredBytesPerS;
  }

  /** The latency mode in effect (auto resolved). */
  get latencyMode(): EffectiveLatencyMode {
    const active = this.activeKey !== undefined ? this.streams.get(this.activeKey) : undefined;
    const durationS = active?.ordered[active.ordered.length - 1]?.durationS ?? 2;
    return resolveLatencyMode(this.options.latencyMode, this.playback, durationS);
  }

  loadSegment(ref: SegmentRef): SegmentLoad {
    if (this.destroyed) return { result: Promise.reject(new ShoalError('DESTROYED', 'loadSegment after destroy()')), abort: () => {} };
    const stream = this.stream(ref.streamKey);
    if (!stream.refs.has(ref.sequence)) {
      stream.refs.set(ref.sequence, ref);
      stream.ordered = [...stream.refs.values()].sort((a, b) => a.startS - b.startS);
    }
    if (this.activeKey === undefined) this.setActiveStream(ref.streamKey);
    const requestMs = this.clock.now();
    const stored = this.store.get(ref.streamKey, ref.sequence);
    if (stored) {
      const timing = { requestMs, firstByteMs: requestMs, doneMs: requestMs };
      this.emit('segment-loaded', { ref, source: 'store', bytes: stored.length, timing });
      return { result: Promise.resolve({ bytes: stored, source: 'store', timing }), abort: () => {} };
    }
    const { waiter, result } = stream.waiters.add(ref, requestMs);
    this.scheduleTick(0);
    return { result, abort: () => this.abortWaiter(stream, waiter) };
  }

  getStats(): EngineStats {
    const totals = { httpBytes: 0, p2pBytes: 0, uploadBytes: 0 };
    const streams: Record<string, StreamStats> = {};
    const peers = new Set<string>();
    for (const stream of this.streams.values()) {
      stream.stats.peers = stream.pool.size;
      streams[stream.key] = { ...stream.stats };
      totals.httpBytes += stream.stats.httpBytes;
      totals.p2pBytes += stream.stats.p2pBytes;
      totals.uploadBytes += stream.stats.uploadBytes;
      for (const peerId of stream.pool.peers.keys()) peers.add(peerId);
    }
    return {
      ...totals, peers: peers.size, bannedPeers: this.banned.size, storeBytes: this.store.bytesUsed, latencyMode: this.latencyMode,
      upload: this.governor.stats, streams,
    };
  }

  /** Stops everything: timers, transfers, peers, swarms, signaling. Pending loads reject with DESTROYED. */
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    if (this.tickTimer !== undefined) this.clock.clearTimeout(this.tickTimer);
    this.tickTimer = undefined;
    const error = new ShoalError('DESTROYED', 'the engine was destroyed');
    for (const stream of this.streams.values()) {
      stream.transfers.destroy();
      stream.waiters.rejectAll(error);
      stream.pool.leave();
    }
    this.governor.destroy();
    this.signaling?.destroy();
    this.store.clear();
    this.events.clear();
  }

  // ---- streams and swarms ----

  private stream(key: string): Stream {
    const existing = this.streams.get(key);
    if (existing) return existing;
    const stream: Stream = {
      key, isLive: false, refs: new Map(), ordered: [], registered: false, waiters: new PendingLoads(), bytesPerS: DEFAULT_BYTES_PER_S,
      stats: { httpBytes: 0, p2pBytes: 0, uploadBytes: 0, peers: 0, httpSegments: 0, p2pSegments: 0 },
      transfers: undefined!,
      seeding: new LiveEdgeSeeding(
        key, this.options,
        (sequence) => stream.transfers.has(sequence) || this.store.has(key, sequence),
        (sequence, state) => stream.pool.announce(sequence, state),
      ),
      pool: undefined!,
    };
    stream.pool = new PeerPool({
      streamKey: key, clock: this.clock, options: this.options, store: this.store, governor: this.governor, banned: this.banned,
      stats: stream.stats, emit: this.emit, owner: this.peerEvents(stream),
    });
    stream.transfers = new Transfers(stream, {
      clock: this.clock, http: this.http, store: this.store, verifier: this.verifier, throughput: this.throughput, emit: this.emit,
      isDestroyed: () => this.destroyed, replan: () => this.scheduleTick(0),
    });
    this.streams.set(key, stream);
    return stream;
  }

  /** What a stream's peers deliver, and when they come and go: for its transfers, seeding and plans. */
  private peerEvents(stream: Stream): PeerPoolOwner {
    return {
      isDestroyed: () => this.destroyed,
      fetching: () => [...stream.transfers.sequences()],
      replan: () => this.scheduleTick(0),
      onAvailability: (peer, sequence) => {
        if (sequence === undefined) return this.scheduleTick(0);
        if ((peer.isFetching(sequence) || peer.has(sequence)) && stream.isLive && stream.key === this.activeKey) {
          stream.seeding.relay(sequence, stream.ordered[stream.ordered.length - 1]?.sequence, this.clock.now());
        }
        // Only a new holder of a segment we lack can change a plan now; "fetching" and withdrawals
        // are read by the next plan (an elected seeder plans again at its start time anyway).
        if (peer.has(sequence) && !stream.transfers.has(sequence) && !this.store.has(stream.key, sequence)) this.scheduleTick(0);
      },
      onChunk: (peer, sequence, chunk) => stream.transfers.onChunk(peer, sequence, chunk),
      onSegment: (peer, sequence, bytes) => {
        stream.transfers.onSegment(peer, sequence, bytes);
        this.scheduleTick(0);
      },
      onRefused: (peer, sequence) => {
        stream.transfers.onRefused(peer, sequence);
        this.scheduleTick(0);
      },
      onPeerGone: (peer, banned) => stream.transfers.onPeerGone(peer, banned),
    };
  }

  // ---- scheduling ----

  private scheduleTick(delayMs: number): void {
    if (this.destroyed) return;
    const atMs = this.clock.now() + Math.max(delayMs, 0);
    if (this.tickTimer !== undefined && this.tickAtMs <= atMs) return;
    if (this.tickTimer !== undefined) this.clock.clearTimeout(this.tickTimer);
    this.tickAtMs = atMs;
    this.tickTimer = this.clock.setTimeout(() => {
      this.tickTimer = undefined;
      this.tickAtMs = Infinity;
      this.tick();
    }, Math.max(delayMs, 0));
  }

  private tick(): void {
    if (this.destroyed) return;
    const now = this.clock.now();
    let nextMs = Infinity;
    for (const stream of this.streams.values()) {
      const active = stream.key === this.activeKey;
      if (!active && stream.waiters.size === 0 && stream.transfers.size === 0) continue;
      if (active) nextMs = Math.min(nextMs, stream.pool.topUp());
      nextMs = Math.min(nextMs, this.planStream(stream, active, now));
      nextMs = Math.min(nextMs, stream.seeding.expire(now));
    }
    if (nextMs < Infinity) this.scheduleTick(nextMs - now);
  }

  /** The windows of a latency mode: options never change, so each mode's are computed once. */
  private windows(mode: EffectiveLatencyMode): ModeWindows {
    let windows = this.windowsByMode.get(mode);
    if (!windows) this.windowsByMode.set(mode, (windows = windowsFor(mode, this.options)));
    return windows;
  }

  /** Plans one stream; returns when to plan again (or Infinity). */
  private planStream(stream: Stream, active: boolean, now: number): number {
    const playback = active ? this.playback : undefined;
    const windows = this.windows(this.latencyMode);
    const candidates = new Map<number, SegmentRef>();
    for (const sequence of stream.waiters.sequences()) candidates.set(sequence, stream.refs.get(sequence)!);
    for (const sequence of stream.transfers.sequences()) candidates.set(sequence, stream.refs.get(sequence)!);
    for (const sequence of stream.seeding.elected()) candidates.set(sequence, stream.refs.get(sequence)!);
    if (active && playback && this.options.p2pDownload && stream.pool.size > 0) {
      const sizeBytes = (ref: SegmentRef) => this.store.sizeOf(stream.key, ref.sequence) ?? estimatedSegmentBytes(ref, stream.bytesPerS);
      const budgetBytes = this.store.bytesLimit * PREFETCH_STORE_SHARE;
      for (const ref of prefetchWindow(stream.ordered, playback.positionS, windows.prefetchAheadS, budgetBytes, sizeBytes)) candidates.set(ref.sequence, ref);
    }
    const segments: SegmentPlan[] = [];
    let parkedWakeMs = Infinity;
    for (const [sequence, ref] of candidates) {
      if (!ref) continue;
      if (this.store.has(stream.key, sequence)) {
        stream.seeding.started(sequence);
        this.serveFromStore(stream, sequence);
        continue;
      }
      const transfer = stream.transfers.get(sequence);
      const sizeBytes = estimatedSegmentBytes(ref, stream.bytesPerS);
      const deadlineMs = segmentDeadlineMs(now, playback, ref.startS, this.playbackAtMs);
      if (transfer?.state === 'parked') {
        const { recheckAtMs } = transfer.parked!;
        const step = parkedStep({
          nowMs: now, recheckAtMs, requested: stream.waiters.has(sequence), deadlineMs, sizeBytes, httpThroughputBytesPerS: this.throughput.estimateBytesPerS, windows,
        });
        if (step === 'recheck') stream.transfers.recheckParked(transfer);
        else if (step === 'give-up') stream.transfers.giveUpParked(transfer);
        else parkedWakeMs = Math.min(parkedWakeMs, recheckAtMs);
        continue;
      }
      const progress = transfer?.state === 'p2p' ? transfer.peer?.downloadProgress : undefined;
      segments.push({
        sequence,
        sizeBytes,
        deadlineMs,
        requested: stream.waiters.has(sequence),
        httpInFlight: transfer !== undefined && transfer.state !== 'p2p',
        p2p: transfer?.state === 'p2p' && progress ? { peerId: transfer.peer!.id, ...progress } : undefined,
        seedAtMs: stream.seeding.startAtMs(sequence),
        comingFromPeer: stream.pool.any((peer) => peer.isFetching(sequence)),
        seedSatisfied: stream.seeding.satisfied(sequence, () => stream.pool.any((peer) => peer.isFetching(sequence) || peer.has(sequence))),
      });
    }
    if (segments.length === 0) return parkedWakeMs;
    const peers = [...stream.pool.peers.values()]
      .filter((peer) => peer.handshaken && peer.remoteUploads)
      .map((peer) => {
        const rate = peer.expectedRate;
        return {
          id: peer.id, has: (sequence: number) => peer.mayRequest(sequence) && stream.transfers.p2pAllowed(sequence), throughputBytesPerS: rate.bytesPerS, waitMs: rate.waitMs,
          busy: peer.busyUntilMs > now || peer.downloading !== undefined || rate.bytesPerS <= 0,
        };
      });
    const actions = plan({
      nowMs: now, isLive: stream.isLive, segments, peers, httpThroughputBytesPerS: this.throughput.estimateBytesPerS,
      windows, p2pDownload: this.options.p2pDownload, maxP2PDownloads: this.options.maxP2PDownloads,
    });
    let wakeMs = Infinity;
    for (const action of actions) {
      if (action.type === 'wake') wakeMs = action.atMs;
      else if (action.type === 'http') {
        log(`#${action.sequence} over HTTP (${action.reason})`, stream.key);
        stream.seeding.started(action.sequence);
        stream.transfers.startHttp(action.sequence, action.reason === 'seed');
      } else if (action.type === 'p2p') {
        const peer = stream.pool.peers.get(action.peerId)!;
        log(`#${action.sequence} requested from peer ${peer.id.slice(0, 8)}`, stream.key);
        stream.transfers.startP2P(action.sequence, peer);
      } else stream.transfers.cancelP2P(action.sequence, action.resumeOverHttp);
    }
    return nextPlanMs(now, wakeMs, parkedWakeMs, stream.transfers.anyOverP2P(), stream.waiters.size > 0, this.options.tickIntervalMs);
  }

  private serveFromStore(stream: Stream, sequence: number): void {
    stream.waiters.settle(sequence, (waiter) => {
      const bytes = this.store.get(stream.key, sequence)!;
      const now = this.clock.now();
      const timing = { requestMs: waiter.requestMs, firstByteMs: now, doneMs: now };
      this.emit('segment-loaded', { ref: waiter.ref, source: 'store', bytes: bytes.length, timing });
      waiter.resolve({ bytes, source: 'store', timing });
    });
  }

  private abortWaiter(stream: Stream, waiter: Waiter): void {
    const sequence = waiter.ref.sequence;
    const { removed, last } = stream.waiters.remove(waiter);
    if (!removed) return;
    if (last) stream.transfers.abandon(sequence);
    waiter.reject(new ShoalError('ABORTED', `load of segment ${sequence} aborted`));
  }

  private assertAlive(): void {
    if (this.destroyed) throw new ShoalError('DESTROYED', 'the engine was destroyed; create a new one');
  }
}
