// ShoalEngine: the coordinator. It owns the streams (stream.ts: one swarm per rendition, each with
// its peers in peer-pool.ts, its HTTP and P2P transfers in transfers.ts, the player's pending
// loads in pending-loads.ts, and who fetches new live segments from the origin in
// live-edge-seeding.ts), takes the player's input, and plans each stream (stream-planner.ts,
// around the pure scheduler.ts) whenever state changes, and on a timer while work is in flight.
import { EngineEvents, ORIGIN_KINDS, type EngineEventName, type EngineListener, type EngineStats, type StreamStats } from './engine-events.js';
import { ShoalError } from './errors.js';
import { SegmentVerifier, webCryptoSha256, type Sha256 } from './store/integrity.js';
import { createLogger } from './logger.js';
import { OriginThroughput } from './transfers/origin-throughput.js';
import { resolveOptions, type EngineOptions, type EngineOptionsInput } from './options.js';
import { P2pStatusReporter, startingP2pStatus } from './p2p-status.js';
import type { SegmentLoad } from './transfers/pending-loads.js';
import { MAX_MEETING_WAIT_MS, meetingPeersWaits, playbackAtRisk, playbackWantsPlan } from './plan/playback-policy.js';
import { resolveLatencyMode, windowsFor, type EffectiveLatencyMode, type ModeWindows } from './plan/scheduler.js';
import { MemorySegmentStore } from './store/segment-store.js';
import { downloadsLeftBytes, planStream, seedShareFor } from './plan/stream-planner.js';
import { Stream } from './stream.js';
import type { Clock, HttpClient, PlaybackReport, SegmentRef, SegmentStore, Signaling, TimerId } from './types.js';
import { UploadGovernor } from './upload/upload-governor.js';
import { measuredPace } from './wire/peer-protocol.js';

const log = createLogger('shoal:core:engine');

export interface EngineDeps {
  clock: Clock;
  http: HttpClient;
  /** Finds peers. Without it the engine is an HTTP loader with stats. The engine destroys it on destroy(). */
  signaling?: Signaling;
  /** Why there is no signaling though P2P was asked for (e.g. WEBRTC_UNAVAILABLE's message): stats and the `p2p` event say so. */
  p2pUnavailable?: string;
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
  /**
   * The rendition's bitrate as its multivariant playlist says (BANDWIDTH, a peak), bits/s: segment
   * sizes are guessed from it until the first segment of the stream arrives (missing or 0: 2 Mbit/s).
   */
  bandwidthBitsPerS?: number;
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
  private playback: PlaybackReport | undefined;
  private playbackAtMs = 0;
  /** When a playback report last asked for a plan. */
  private playbackPlanMs = -Infinity;
  private readonly throughput: OriginThroughput;
  private readonly p2p: P2pStatusReporter;
  private tickTimer: TimerId | undefined;
  private tickAtMs = Infinity;
  /** Since when meeting peers has waited for the player (undefined: it does not). */
  private meetingHeldSinceMs: number | undefined;
  private destroyed = false;
  /** The uplink's idle and total time at the last election (uplinkIdleShare). */
  private uplinkMark = { idleMs: 0, totalMs: 0 };

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
      this.options.requireVerifiedP2P,
    );
    this.store.onEvict((streamKey, sequence) => this.streams.get(streamKey)?.pool.evicted(sequence));
    const starting = startingP2pStatus(this.options, this.signaling !== undefined, deps.p2pUnavailable);
    this.p2p = new P2pStatusReporter(starting, this.clock, this.emit, this.verifier);
    this.verifier.onMethodChange = () => (this.p2p.changed(), this.scheduleTick(0));
    this.signaling?.watchStatus?.((problem) => this.p2p.setProblem(problem));
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
    const fresh = stream.applyPlaylist(registration.isLive, registration.segments);
    stream.guessBitrate((registration.bandwidthBitsPerS ?? 0) / 8);
    if (stream.isLive && wasRegistered && fresh.length > 0) {
      // Only neighbours that upload can be origin fetchers for the others (uplink 0 never seeds), and not one whose claims lapsed.
      const uploaders = [...stream.pool.peers.values()].filter((peer) => peer.remoteUploads && !peer.lapsed).map((peer) => peer.id);
      const now = this.clock.now();
      const share = seedShareFor(stream, stream.refs.get(fresh[fresh.length - 1]!)!, now, {
        playback: stream.key === this.activeKey ? this.playback : undefined, playbackAtMs: this.playbackAtMs,
        windows: this.windows(this.latencyMode, now), httpThroughputBytesPerS: this.throughput.estimateBytesPerS,
        ownUploadBytesPerS: measuredPace(this.governor.advertised.paceBytesPerS),
      });
      stream.seeding.elect(fresh, this.signaling?.localPeerId, uploaders, stream.pool.swarmSize, now, { ...share, idleShare: this.uplinkIdleShare() });
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
    // Its swarm is joined now, or by the tick after meeting peers stops waiting for the player.
    // A newcomer announces before its first loads: its first segments may come from peers. Asking
    // for more peers waits for the player (meetingPeersWaits); signaling keeps the first announce small.
    this.stream(streamKey).pool.join(this.signaling);
    for (const other of this.streams.values()) {
      if (other.key !== this.activeKey && other.key !== this.previousKey) other.pool.leave();
    }
    this.scheduleTick(0);
  }

  setPlayback(state: PlaybackReport): void {
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
   * The downlink's rate as this engine's own HTTP transfers (player loads, live-edge seeding, Range
   * resumes) measured it: every byte received while one ran, from the origin or from peers, over
   * its duration; bytes/s, or undefined before the first transfer large enough to time. What an
   * HTTP-only player would see: adapters report P2P deliveries to the player's ABR at this rate.
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
    stream.addSegment(ref);
    if (this.activeKey === undefined) this.setActiveStream(ref.streamKey);
    return stream.transfers.load(ref);
  }

  /** Integrations report what went wrong around the engine (and what playback survived) as its `warning` event. */
  warn(message: string): void {
    if (!this.destroyed) this.emit('warning', { message });
  }

  getStats(): EngineStats {
    const totals = { httpBytes: 0, originBytes: { seed: 0, urgent: 0, range: 0, refetch: 0 }, p2pBytes: 0, uploadBytes: 0, controlBytes: 0 };
    const streams: Record<string, StreamStats> = {};
    const peers = new Set<string>();
    for (const stream of this.streams.values()) {
      streams[stream.key] = { ...stream.stats, originBytes: { ...stream.stats.originBytes }, peers: stream.pool.peers.size };
      totals.httpBytes += stream.stats.httpBytes;
      for (const kind of ORIGIN_KINDS) totals.originBytes[kind] += stream.stats.originBytes[kind];
      totals.p2pBytes += stream.stats.p2pBytes;
      totals.uploadBytes += stream.stats.uploadBytes;
      totals.controlBytes += stream.stats.controlBytes;
      for (const peerId of stream.pool.peers.keys()) peers.add(peerId);
    }
    const { state: p2p, reason: p2pReason, verification: p2pVerification } = this.p2p.status;
    return {
      p2p, p2pReason, p2pVerification, ...totals, peers: peers.size, bannedPeers: this.banned.size, storeBytes: this.store.bytesUsed, latencyMode: this.latencyMode,
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
      stream.transfers.waiters.rejectAll(error);
      stream.pool.leave();
    }
    this.governor.destroy();
    this.p2p.destroy();
    this.signaling?.destroy();
    this.store.clear();
    this.events.clear();
  }

  // ---- streams and swarms ----

  private stream(key: string): Stream {
    let stream = this.streams.get(key);
    if (!stream) {
      stream = new Stream(key, {
        clock: this.clock, http: this.http, store: this.store, verifier: this.verifier, governor: this.governor, throughput: this.throughput,
        options: this.options, banned: this.banned, emit: this.emit, isDestroyed: () => this.destroyed,
        isActive: (streamKey) => streamKey === this.activeKey, replan: () => this.scheduleTick(0),
      });
      this.streams.set(key, stream);
    }
    return stream;
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
    const meetingWaits = this.meetingPeersWaits(now);
    if (meetingWaits) nextMs = this.meetingHeldSinceMs! + MAX_MEETING_WAIT_MS;
    for (const stream of this.streams.values()) {
      const active = stream.key === this.activeKey;
      // Every stream's downloads share the one downlink; read again for each stream, after the previous one's plan started its own.
      const downlinkLeftBytes = [...this.streams.values()].flatMap(downloadsLeftBytes);
      if (!active && stream.transfers.waiters.size === 0 && stream.transfers.running.size === 0) continue;
      if (active) stream.pool.join(this.signaling);
      if (active && !meetingWaits) nextMs = Math.min(nextMs, stream.pool.topUp());
      nextMs = Math.min(nextMs, planStream(stream, now, {
        store: this.store, playback: active ? this.playback : undefined, playbackAtMs: this.playbackAtMs,
        windows: this.windows(this.latencyMode, now), httpThroughputBytesPerS: this.throughput.estimateBytesPerS, downlinkLeftBytes,
        options: !this.verifier.refusesP2P ? this.options : { ...this.options, p2pDownload: false }, localPeerId: this.signaling?.localPeerId ?? '',
      }));
      nextMs = Math.min(nextMs, stream.seeding.expire(now));
    }
    if (nextMs < Infinity) this.scheduleTick(nextMs - now);
    this.reserveUplinkForDownloads();
  }

  /** The share of the uplink's time since the last call that nobody asked for anything (uplink-usage.ts). */
  private uplinkIdleShare(): number {
    const { ms } = this.governor.stats.uplink;
    const total = ms.idle + ms.yielding + ms.relay + ms.paced + ms.full;
    const previous = this.uplinkMark;
    this.uplinkMark = { idleMs: ms.idle, totalMs: total };
    const spanMs = total - previous.totalMs;
    return spanMs > 0 ? (ms.idle - previous.idleMs) / spanMs : 0;
  }

  /** Uploads leave the uplink that the origin downloads the player waits on need (UploadGovernor.setOriginDownloads). */
  private reserveUplinkForDownloads(): void {
    const downloading = [...this.streams.values()].some((stream) => stream.transfers.playerWaitsOnOrigin());
    this.governor.setOriginDownloads(downloading ? (this.throughput.measuredBytesPerS ?? this.options.initialHttpThroughputBytesPerS) : 0);
  }

  /** Whether the active swarm's requests for more peers wait for the player now (see meetingPeersWaits). */
  private meetingPeersWaits(now: number): boolean {
    const waits = meetingPeersWaits(this.playback, now - (this.meetingHeldSinceMs ?? now));
    this.meetingHeldSinceMs = waits ? (this.meetingHeldSinceMs ?? now) : undefined;
    return waits;
  }

  /** The windows of a latency mode: options never change, so each mode's are computed once. */
  private windows(mode: EffectiveLatencyMode, nowMs: number): ModeWindows {
    let windows = this.windowsByMode.get(mode);
    if (!windows) this.windowsByMode.set(mode, (windows = windowsFor(mode, this.options)));
    const originTroubleMs = this.throughput.marginMs(nowMs);
    const uplinkQueueMs = this.governor.controller.queueDelayNowMs(nowMs);
    return originTroubleMs === 0 && uplinkQueueMs === 0 ? windows : { ...windows, originTroubleMs, uplinkQueueMs };
  }

  private assertAlive(): void {
    if (this.destroyed) throw new ShoalError('DESTROYED', 'the engine was destroyed; create a new one');
  }
}
