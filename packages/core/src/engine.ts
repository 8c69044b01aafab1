// ShoalEngine: carries out the scheduler's decisions. It owns the streams (one swarm per
// rendition, its peers in peer-pool.ts), the HTTP and P2P transfers and the player's pending loads
// (pending-loads.ts); it asks scheduler.plan() what to do whenever state changes, and on a timer
// while work is in flight. Who fetches new live segments from the origin: live-edge-seeding.ts.
import { ShoalError } from './errors.js';
import { SegmentVerifier, webCryptoSha256, type Sha256 } from './integrity.js';
import { createLogger } from './logger.js';
import { resolveOptions, type EngineOptions, type EngineOptionsInput } from './options.js';
import { SegmentState } from './peer-protocol.js';
import type { PeerSession } from './peer.js';
import { PeerPool, type PeerPoolOwner } from './peer-pool.js';
import { LiveEdgeSeeding } from './live-edge-seeding.js';
import { EngineEvents, type EngineEventName, type EngineListener, type EngineStats, type StreamStats } from './engine-events.js';
import { PendingLoads, type LoadResult, type LoadTiming, type SegmentLoad, type Waiter } from './pending-loads.js';
import { UploadGovernor } from './upload-governor.js';
import {
  httpBudgetMs,
  plan,
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
  HttpTransfer,
  PlaybackState,
  SegmentRef,
  SegmentSource,
  SegmentStore,
  Signaling,
  TimerId,
} from './types.js';

const log = createLogger('shoal:core:engine');

/** Bitrate assumed for a segment's size before any segment of its stream was measured: 2 Mbit/s. */
const DEFAULT_BYTES_PER_S = 250_000;
/** Checks of P2P bytes the integrity manifest does not list yet, before they are given up (a live manifest lags its playlist). */
const MAX_INTEGRITY_CHECKS = 3;
/** P2P transfers of one segment whose bytes were thrown away (cancelled, peer gone, unverifiable) before P2P gives up on it. */
const MAX_WASTED_P2P_TRANSFERS = 2;
/** A playback report this far from where the previous one extrapolates to is a jump (seek, stall): plan at once. */
const PLAYBACK_DRIFT_S = 0.2;
/** Otherwise, playback reports ask for a plan at most this often. */
const PLAYBACK_REPLAN_MS = 1000;
/** Share of the store that prefetching may fill ahead of the playhead: a window the store cannot hold would be evicted and fetched again. */
const PREFETCH_STORE_SHARE = 0.5;
/** Uploads pause while the player has less than this ahead of it (seconds of media; live: at most half the target latency). */
const LOW_BUFFER_S = 2;

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

interface Fetch {
  sequence: number;
  /** `verifying`: bytes complete, integrity check running. */
  kind: 'http' | 'p2p' | 'verifying';
  /** The peer serving the transfer now. */
  peer: PeerSession | undefined;
  /** The peer that sent the P2P bytes, kept after an HTTP resume: banned if the whole fails verification. */
  p2pPeer: PeerSession | undefined;
  http: HttpTransfer | undefined;
  /** Bytes received over P2P before an HTTP Range resume. */
  prefix: Uint8Array | undefined;
  p2pBytes: number;
  httpBytes: number;
  startedMs: number;
  firstByteMs: number | undefined;
  /** The origin request for the whole segment, if one runs or ran (not a Range resume). */
  origin: { requestMs: number; firstByteMs: number | undefined } | undefined;
  seed: boolean;
  /** Integrity verdicts asked for these bytes so far. */
  checks: number;
  /** Complete P2P bytes the manifest does not list yet: kept, and checked again at `recheckAtMs`, rather than downloaded again. */
  parked: { bytes: Uint8Array; recheckAtMs: number } | undefined;
}

interface Stream {
  key: string;
  isLive: boolean;
  refs: Map<number, SegmentRef>;
  /** By start time, for window lookups. */
  ordered: SegmentRef[];
  registered: boolean;
  pool: PeerPool;
  fetches: Map<number, Fetch>;
  waiters: PendingLoads;
  /** Live-edge seeding: who fetches new live segments from the origin. */
  seeding: LiveEdgeSeeding;
  /** P2P transfers per segment whose bytes were thrown away; at MAX_WASTED_P2P_TRANSFERS the segment comes over HTTP only. */
  wastedP2P: Map<number, number>;
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
  private httpThroughputBytesPerS: number;
  /** Origin throughput from measurements only (no assumed start value); undefined before the first. */
  private measuredHttpBytesPerS: number | undefined;
  private tickTimer: TimerId | undefined;
  private tickAtMs = Infinity;
  private destroyed = false;

  constructor(options: EngineOptionsInput, deps: EngineDeps) {
    this.options = resolveOptions(options);
    this.clock = deps.clock;
    this.http = deps.http;
    this.signaling = deps.signaling;
    this.store = deps.store ?? new MemorySegmentStore(this.options.storeBytesLimit);
    this.httpThroughputBytesPerS = this.options.initialHttpThroughputBytesPerS;
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
      if (!refs.has(sequence) && (stream.fetches.has(sequence) || stream.waiters.has(sequence))) refs.set(sequence, ref);
    }
    stream.refs = refs;
    stream.ordered = [...refs.values()].sort((a, b) => a.startS - b.startS);
    stream.seeding.forget((sequence) => refs.has(sequence), stream.ordered[0]?.sequence ?? 0);
    for (const sequence of stream.wastedP2P.keys()) if (!refs.has(sequence)) stream.wastedP2P.delete(sequence);
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
    const previous = this.playback;
    const expectedS = previous ? previous.positionS + ((now - this.playbackAtMs) / 1000) * previous.rate : 0;
    // Playback that went on as extrapolated changes no deadline: plan again at once only when
    // something the plan reads changed (a seek, pause, rate, live edge or latency target), else at
    // most every PLAYBACK_REPLAN_MS, for segments entering the prefetch window.
    const changed =
      !previous || previous.rate !== state.rate || previous.isLive !== state.isLive || previous.liveEdgeS !== state.liveEdgeS ||
      previous.targetLatencyS !== state.targetLatencyS || Math.abs(state.positionS - expectedS) > PLAYBACK_DRIFT_S;
    this.playback = state;
    this.playbackAtMs = now;
    this.governor.setYielding(playbackAtRisk(state));
    // Renditions share the media timeline: what is behind the playhead is behind it in every rendition.
    for (const key of this.streams.keys()) this.store.setPlayhead(key, state.positionS);
    if (changed || now - this.playbackPlanMs >= PLAYBACK_REPLAN_MS) {
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
    return this.measuredHttpBytesPerS;
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
      for (const fetch of stream.fetches.values()) fetch.http?.abort();
      stream.fetches.clear();
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
    const fetches = new Map<number, Fetch>();
    const stats: StreamStats = { httpBytes: 0, p2pBytes: 0, uploadBytes: 0, peers: 0, httpSegments: 0, p2pSegments: 0 };
    const stream: Stream = {
      key, isLive: false, refs: new Map(), ordered: [], registered: false, fetches, waiters: new PendingLoads(), wastedP2P: new Map(),
      bytesPerS: DEFAULT_BYTES_PER_S, stats,
      seeding: new LiveEdgeSeeding(
        key, this.options,
        (sequence) => fetches.has(sequence) || this.store.has(key, sequence),
        (sequence, state) => stream.pool.announce(sequence, state),
      ),
      pool: new PeerPool({
        streamKey: key, clock: this.clock, options: this.options, store: this.store, governor: this.governor, banned: this.banned,
        stats, emit: this.emit, owner: this.peerEvents(() => stream),
      }),
    };
    this.streams.set(key, stream);
    return stream;
  }

  /** What a stream's peers deliver, and when they come and go, as it concerns transfers and plans. */
  private peerEvents(streamOf: () => Stream): PeerPoolOwner {
    return {
      isDestroyed: () => this.destroyed,
      fetching: () => [...streamOf().fetches.keys()],
      replan: () => this.scheduleTick(0),
      onAvailability: (peer, sequence) => {
        const stream = streamOf();
        if (sequence === undefined) return this.scheduleTick(0);
        if ((peer.isFetching(sequence) || peer.has(sequence)) && stream.isLive && stream.key === this.activeKey) {
          stream.seeding.relay(sequence, stream.ordered[stream.ordered.length - 1]?.sequence, this.clock.now());
        }
        // Only a new holder of a segment we lack can change a plan now; "fetching" and withdrawals
        // are read by the next plan (an elected seeder plans again at its start time anyway).
        if (peer.has(sequence) && !stream.fetches.has(sequence) && !this.store.has(stream.key, sequence)) this.scheduleTick(0);
      },
      onChunk: (peer, sequence, chunk) => {
        const stream = streamOf();
        const fetch = stream.fetches.get(sequence);
        if (!fetch || fetch.peer !== peer) return;
        fetch.firstByteMs ??= this.clock.now();
        fetch.p2pBytes += chunk.length;
        stream.stats.p2pBytes += chunk.length;
        this.emit('bytes-down', { streamKey: stream.key, source: 'p2p', bytes: chunk.length });
      },
      onSegment: (peer, sequence, bytes) => {
        const stream = streamOf();
        const fetch = stream.fetches.get(sequence);
        if (fetch && fetch.peer === peer) void this.complete(stream, fetch, bytes);
        this.scheduleTick(0);
      },
      onRefused: (peer, sequence) => {
        const stream = streamOf();
        const fetch = stream.fetches.get(sequence);
        if (fetch && fetch.peer === peer) this.dropFetch(stream, fetch);
        this.scheduleTick(0);
      },
      onPeerGone: (peer, banned) => {
        const stream = streamOf();
        const sequence = peer.downloading;
        const fetch = sequence !== undefined ? stream.fetches.get(sequence) : undefined;
        if (!fetch || fetch.peer !== peer) return;
        // A peer leaving mid-transfer must not stall the player: keep what arrived, fetch the rest
        // over HTTP. What a banned peer sent is not kept.
        const { prefix, totalBytes } = peer.cancelDownload();
        const kept = banned ? new Uint8Array(0) : prefix;
        if (stream.waiters.has(fetch.sequence)) this.resumeOverHttp(stream, fetch, kept, totalBytes);
        else this.dropFetch(stream, fetch);
      },
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
      if (!active && stream.waiters.size === 0 && stream.fetches.size === 0) continue;
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
    for (const sequence of stream.fetches.keys()) candidates.set(sequence, stream.refs.get(sequence)!);
    for (const sequence of stream.seeding.elected()) candidates.set(sequence, stream.refs.get(sequence)!);
    if (active && playback && this.options.p2pDownload && stream.pool.size > 0) {
      // Prefetch over P2P: segments ahead of the playhead within the mode's window.
      const untilS = playback.positionS + windows.prefetchAheadS;
      let budgetBytes = this.store.bytesLimit * PREFETCH_STORE_SHARE;
      for (let i = lowerBound(stream.ordered, playback.positionS); i < stream.ordered.length; i++) {
        const ref = stream.ordered[i]!;
        budgetBytes -= this.store.sizeOf(stream.key, ref.sequence) ?? segmentBytes(stream, ref);
        if (ref.startS >= untilS || budgetBytes < 0) break;
        candidates.set(ref.sequence, ref);
      }
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
      const fetch = stream.fetches.get(sequence);
      const sizeBytes = segmentBytes(stream, ref);
      const deadlineMs = segmentDeadlineMs(now, playback, ref.startS, this.playbackAtMs);
      if (fetch?.parked) {
        const { bytes, recheckAtMs } = fetch.parked;
        // The player waiting for it may wait for the next manifest only while HTTP would still be in time after it.
        const httpMustStartMs = stream.waiters.has(sequence) ? deadlineMs - httpBudgetMs(sizeBytes, this.httpThroughputBytesPerS, windows) : Infinity;
        if (recheckAtMs <= now) void this.complete(stream, fetch, bytes);
        else if (httpMustStartMs <= recheckAtMs) this.giveUpParked(stream, fetch);
        else parkedWakeMs = Math.min(parkedWakeMs, recheckAtMs);
        continue;
      }
      const progress = fetch?.kind === 'p2p' ? fetch.peer?.downloadProgress : undefined;
      segments.push({
        sequence,
        sizeBytes,
        deadlineMs,
        requested: stream.waiters.has(sequence),
        httpInFlight: fetch !== undefined && fetch.kind !== 'p2p',
        p2p: fetch?.kind === 'p2p' && progress ? { peerId: fetch.peer!.id, ...progress } : undefined,
        seedAtMs: stream.seeding.startAtMs(sequence),
        comingFromPeer: stream.pool.any((peer) => peer.isFetching(sequence)),
        seedSatisfied: stream.seeding.satisfied(sequence, () => stream.pool.any((peer) => peer.isFetching(sequence) || peer.has(sequence))),
      });
    }
    if (segments.length === 0) return parkedWakeMs;
    // A segment whose P2P bytes were thrown away too often is not asked of peers again.
    const p2pAllowed = (sequence: number) => (stream.wastedP2P.get(sequence) ?? 0) < MAX_WASTED_P2P_TRANSFERS;
    const peers = [...stream.pool.peers.values()]
      .filter((peer) => peer.handshaken && peer.remoteUploads)
      .map((peer) => {
        const rate = peer.expectedRate;
        return {
          id: peer.id, has: (sequence: number) => peer.mayRequest(sequence) && p2pAllowed(sequence), throughputBytesPerS: rate.bytesPerS, waitMs: rate.waitMs,
          busy: peer.busyUntilMs > now || peer.downloading !== undefined || rate.bytesPerS <= 0,
        };
      });
    const actions = plan({
      nowMs: now, isLive: stream.isLive, segments, peers, httpThroughputBytesPerS: this.httpThroughputBytesPerS,
      windows, p2pDownload: this.options.p2pDownload, maxP2PDownloads: this.options.maxP2PDownloads,
    });
    let wakeMs = Infinity;
    for (const action of actions) {
      if (action.type === 'wake') wakeMs = action.atMs;
      else if (action.type === 'http') {
        log(`#${action.sequence} over HTTP (${action.reason})`, stream.key);
        stream.seeding.started(action.sequence);
        this.startHttp(stream, action.sequence, action.reason === 'seed');
      } else if (action.type === 'p2p') {
        const peer = stream.pool.peers.get(action.peerId)!;
        log(`#${action.sequence} requested from peer ${peer.id.slice(0, 8)}`, stream.key);
        this.startFetch(stream, action.sequence, 'p2p', peer);
        peer.request(action.sequence);
      } else {
        const fetch = stream.fetches.get(action.sequence);
        if (!fetch?.peer) continue;
        const { prefix, totalBytes } = fetch.peer.cancelDownload();
        log(`#${action.sequence} P2P cancelled after ${prefix.length} bytes${action.resumeOverHttp ? ', the rest over HTTP' : ''}`, stream.key);
        if (action.resumeOverHttp) this.resumeOverHttp(stream, fetch, prefix, totalBytes);
        else this.dropFetch(stream, fetch);
      }
    }
    // While transfers run, re-plan on a short period: P2P projections change with every chunk.
    const busy = [...stream.fetches.values()].some((fetch) => fetch.kind === 'p2p');
    return Math.min(wakeMs, parkedWakeMs, busy || stream.waiters.size > 0 ? now + this.options.tickIntervalMs : Infinity);
  }

  // ---- transfers ----

  private startFetch(stream: Stream, sequence: number, kind: 'http' | 'p2p', peer: PeerSession | undefined, seed = false): Fetch {
    const fetch: Fetch = {
      sequence, kind, peer, p2pPeer: peer, http: undefined, prefix: undefined, p2pBytes: 0, httpBytes: 0,
      startedMs: this.clock.now(), firstByteMs: undefined, origin: undefined, seed, checks: 0, parked: undefined,
    };
    stream.fetches.set(sequence, fetch);
    stream.pool.announce(sequence, SegmentState.fetching);
    return fetch;
  }

  private startHttp(stream: Stream, sequence: number, seed: boolean): void {
    const fetch = this.startFetch(stream, sequence, 'http', undefined, seed);
    this.runHttp(stream, fetch, undefined);
  }

  private resumeOverHttp(stream: Stream, fetch: Fetch, prefix: Uint8Array, totalBytes: number | undefined): void {
    fetch.kind = 'http';
    fetch.peer = undefined;
    if (prefix.length > 0 && totalBytes !== undefined) {
      fetch.prefix = prefix;
      this.runHttp(stream, fetch, totalBytes);
    } else {
      fetch.p2pBytes = 0;
      fetch.p2pPeer = undefined;
      this.runHttp(stream, fetch, undefined);
    }
  }

  /** HTTP for the whole segment, or (after a P2P prefix) a Range request for its remainder. */
  private runHttp(stream: Stream, fetch: Fetch, totalBytes: number | undefined): void {
    const ref = stream.refs.get(fetch.sequence)!;
    const base = ref.byteRange?.start ?? 0;
    const prefixLength = fetch.prefix?.length ?? 0;
    const range =
      prefixLength > 0 && totalBytes !== undefined ? { start: base + prefixLength, end: base + totalBytes } : ref.byteRange;
    const startedMs = this.clock.now();
    const origin = prefixLength > 0 ? undefined : { requestMs: startedMs, firstByteMs: undefined as number | undefined };
    fetch.origin = origin;
    let received = 0;
    const transfer = this.http.fetch({
      url: ref.url,
      ...(range ? { range } : {}),
      onData: (chunk) => {
        if (stream.fetches.get(fetch.sequence) !== fetch || this.destroyed) return;
        fetch.firstByteMs ??= this.clock.now();
        if (origin) origin.firstByteMs ??= this.clock.now();
        received += chunk.length;
        fetch.httpBytes += chunk.length;
        stream.stats.httpBytes += chunk.length;
        this.emit('bytes-down', { streamKey: stream.key, source: 'http', bytes: chunk.length });
      },
    });
    fetch.http = transfer;
    transfer.body.then(
      (body) => {
        if (stream.fetches.get(fetch.sequence) !== fetch || this.destroyed) return;
        const elapsedMs = this.clock.now() - startedMs;
        if (body.length >= 32 * 1024 && elapsedMs > 0) {
          const bytesPerS = (body.length / elapsedMs) * 1000;
          this.httpThroughputBytesPerS = 0.7 * this.httpThroughputBytesPerS + 0.3 * bytesPerS;
          this.measuredHttpBytesPerS = this.measuredHttpBytesPerS === undefined ? bytesPerS : 0.7 * this.measuredHttpBytesPerS + 0.3 * bytesPerS;
        }
        if (received === 0) {
          // A client that does not report chunks: count the body once.
          fetch.httpBytes += body.length;
          stream.stats.httpBytes += body.length;
          this.emit('bytes-down', { streamKey: stream.key, source: 'http', bytes: body.length });
        }
        stream.stats.httpSegments++;
        let bytes = body;
        if (fetch.prefix) {
          bytes = new Uint8Array(fetch.prefix.length + body.length);
          bytes.set(fetch.prefix);
          bytes.set(body, fetch.prefix.length);
        }
        void this.complete(stream, fetch, bytes);
      },
      (error: unknown) => {
        if (stream.fetches.get(fetch.sequence) !== fetch || this.destroyed) return;
        this.dropFetch(stream, fetch);
        const failure = error instanceof Error ? error : new ShoalError('HTTP_NETWORK', `${ref.url}: ${String(error)}`);
        stream.waiters.settle(fetch.sequence, (waiter) => waiter.reject(failure));
        this.scheduleTick(0);
      },
    );
  }

  /** Bytes complete: verify what came from peers, store, announce, hand copies to the waiting loads. */
  private async complete(stream: Stream, fetch: Fetch, bytes: Uint8Array): Promise<void> {
    const ref = stream.refs.get(fetch.sequence)!;
    const fromPeer = fetch.p2pPeer;
    if (fetch.p2pBytes > 0 && this.verifier.enabled) {
      fetch.kind = 'verifying';
      fetch.parked = undefined;
      const verdict = await this.verifier.verify(ref, bytes);
      if (this.destroyed || stream.fetches.get(fetch.sequence) !== fetch) return;
      log(`#${fetch.sequence} P2P bytes ${verdict}`, stream.key);
      if (verdict === 'unverifiable' && ++fetch.checks < MAX_INTEGRITY_CHECKS) {
        // A live manifest lags the playlist: keep the bytes until it can be fetched again, rather
        // than drop them and download the same segment again (and again) from a peer.
        fetch.parked = { bytes, recheckAtMs: Math.max(this.verifier.nextRefreshMs, this.clock.now() + 1) };
        this.scheduleTick(0);
        return;
      }
      if (verdict !== 'valid') {
        if (verdict === 'invalid' && fromPeer) {
          stream.pool.ban(fromPeer, `segment ${fetch.sequence} failed verification`);
          fromPeer.close('sent a segment that failed verification');
        }
        // Whatever the peers' share, the player gets only bytes that pass: start over from the origin.
        if (verdict === 'unverifiable') stream.wastedP2P.set(fetch.sequence, MAX_WASTED_P2P_TRANSFERS);
        stream.fetches.delete(fetch.sequence);
        if (stream.waiters.has(fetch.sequence)) this.startHttp(stream, fetch.sequence, false);
        else stream.pool.announce(fetch.sequence, SegmentState.none);
        this.scheduleTick(0);
        return;
      }
    }
    stream.fetches.delete(fetch.sequence);
    stream.wastedP2P.delete(fetch.sequence);
    if (fetch.p2pBytes > 0 && fetch.httpBytes === 0) stream.stats.p2pSegments++;
    if (ref.durationS > 0) stream.bytesPerS = 0.8 * stream.bytesPerS + 0.2 * (bytes.length / ref.durationS);
    const stored = this.store.put(ref, bytes);
    log(`#${fetch.sequence} complete: ${fetch.p2pBytes} bytes P2P, ${fetch.httpBytes} HTTP`, stream.key);
    stream.pool.announce(fetch.sequence, stored ? SegmentState.has : SegmentState.none);
    const source: SegmentSource = fetch.p2pBytes > fetch.httpBytes ? 'p2p' : 'http';
    let first = true;
    stream.waiters.settle(fetch.sequence, (waiter) => {
      const now = this.clock.now();
      const origin = fetch.origin && fetch.p2pBytes === 0 ? { requestMs: fetch.origin.requestMs, firstByteMs: fetch.origin.firstByteMs ?? now } : undefined;
      const timing: LoadTiming = { requestMs: waiter.requestMs, firstByteMs: Math.max(fetch.firstByteMs ?? now, waiter.requestMs), doneMs: now, ...(origin ? { origin } : {}) };
      // The store copied the bytes: the first load may take this buffer, the others get copies.
      const own = first ? bytes : bytes.slice();
      first = false;
      this.emit('segment-loaded', { ref: waiter.ref, source, bytes: own.length, timing });
      waiter.resolve({ bytes: own, source, timing });
    });
    this.scheduleTick(0);
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

  /** Parked P2P bytes the player cannot wait for any longer: the origin's copy replaces them. */
  private giveUpParked(stream: Stream, fetch: Fetch): void {
    fetch.parked = undefined;
    stream.wastedP2P.set(fetch.sequence, MAX_WASTED_P2P_TRANSFERS);
    this.resumeOverHttp(stream, fetch, new Uint8Array(0), undefined);
  }

  private dropFetch(stream: Stream, fetch: Fetch): void {
    if (stream.fetches.get(fetch.sequence) !== fetch) return;
    stream.fetches.delete(fetch.sequence);
    if (fetch.kind !== 'http' && fetch.p2pBytes > 0) stream.wastedP2P.set(fetch.sequence, (stream.wastedP2P.get(fetch.sequence) ?? 0) + 1);
    fetch.http?.abort();
    stream.pool.announce(fetch.sequence, SegmentState.none);
  }

  private abortWaiter(stream: Stream, waiter: Waiter): void {
    const sequence = waiter.ref.sequence;
    const { removed, last } = stream.waiters.remove(waiter);
    if (!removed) return;
    if (last) {
      // An HTTP transfer nobody waits for is waste (unless it seeds the swarm); P2P prefetch may go on.
      const fetch = stream.fetches.get(sequence);
      if (fetch && fetch.kind === 'http' && !fetch.seed) this.dropFetch(stream, fetch);
    }
    waiter.reject(new ShoalError('ABORTED', `load of segment ${sequence} aborted`));
  }

  private assertAlive(): void {
    if (this.destroyed) throw new ShoalError('DESTROYED', 'the engine was destroyed; create a new one');
  }
}

/**
 * The viewer's own playback needs every bit of its uplink: before it plays, and while it has less
 * than LOW_BUFFER_S buffered (at most half its live target latency). A paused player has time.
 */
function playbackAtRisk(state: PlaybackState): boolean {
  if (state.rate === 0) return false;
  const lowS = state.isLive && state.targetLatencyS !== undefined ? Math.min(LOW_BUFFER_S, state.targetLatencyS / 2) : LOW_BUFFER_S;
  return state.bufferedUntilS - state.positionS < lowS;
}

/** A segment's size: exact for byte ranges, else estimated from the stream's measured bitrate. */
function segmentBytes(stream: Stream, ref: SegmentRef): number {
  return ref.byteRange ? ref.byteRange.end - ref.byteRange.start : Math.round(stream.bytesPerS * ref.durationS);
}

/** Index of the first segment that ends after `positionS`. */
function lowerBound(ordered: SegmentRef[], positionS: number): number {
  let low = 0;
  let high = ordered.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    const ref = ordered[middle]!;
    if (ref.startS + ref.durationS <= positionS) low = middle + 1;
    else high = middle;
  }
  return low;
}
