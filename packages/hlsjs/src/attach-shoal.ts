// attachShoal(hls, options): installs Shoal's fragment loader in an hls.js instance and feeds
// the engine what it needs to schedule: the playlists (segments per rendition), the rendition
// being loaded, and playback (position, rate, buffer, live edge, the player's target latency).
import {
  FetchHttpClient,
  realClock,
  ShoalEngine,
  ShoalError,
  isShoalError,
  swarmIdFromUrl,
  type EngineEventName,
  type EngineListener,
  type EngineOptionsInput,
  type EngineStats,
  type HttpClient,
  type SegmentRef,
  type Signaling,
} from '@shoal/core';
import { createWebRtcSignaling, type WebRtcSignalingOptionsInput } from '@shoal/core/webrtc';
import type Hls from 'hls.js';
import type { FragmentLoaderContext, HlsConfig, Loader, LoaderContext } from 'hls.js';
import { createFragmentLoaderClass, type FragmentLoaderClass } from './fragment-loader.js';
import { loadingTiming } from './loader-stats.js';
import { playbackState } from './playback-state.js';
import { segmentRef, segmentRefs } from './playlist-segments.js';
import { levelStreamKeys } from './stream-keys.js';

export interface ShoalHlsOptions extends EngineOptionsInput {
  /** WebTorrent tracker URLs (`wss://…`). Without trackers (or `signaling`), Shoal loads over HTTP only, with stats. */
  trackers?: string[];
  /**
   * ICE servers for WebRTC. Default: PUBLIC_STUN_SERVERS (public STUN, for viewers behind home NATs).
   * `[]` for one machine or a LAN; add a TURN server of your own (with `username`, `credential`)
   * for viewers behind symmetric NATs.
   */
  iceServers?: RTCIceServer[];
  /** Further tracker-client settings (offers per announce, reconnect backoff, …). */
  signalingOptions?: Omit<Partial<WebRtcSignalingOptionsInput>, 'trackers' | 'iceServers'>;
  /** Your own peer finder instead of trackers + WebRTC (simulators, tests). */
  signaling?: Signaling;
  /** Default: fetch. */
  httpClient?: HttpClient;
}

type MediaEventName = 'timeupdate' | 'seeking' | 'seeked' | 'ratechange' | 'play' | 'pause' | 'waiting' | 'playing' | 'progress';
const MEDIA_EVENTS: MediaEventName[] = ['timeupdate', 'seeking', 'seeked', 'ratechange', 'play', 'pause', 'waiting', 'playing', 'progress'];

/** Shoal attached to one hls.js instance. Events, stats and destroy() of the engine. */
export class ShoalHls {
  readonly engine: ShoalEngine;
  private readonly hls: Hls;
  private readonly loaderClass: FragmentLoaderClass;
  private readonly previousFragmentLoader: HlsConfig['fLoader'];
  private swarmId: string | undefined;
  private streamKeys: string[] = [];
  private liveLevels = new Map<number, { live: boolean; edgeS: number | undefined }>();
  private media: HTMLMediaElement | null = null;
  private readonly unsubscribe: (() => void)[] = [];
  private destroyed = false;

  constructor(hls: Hls, options: ShoalHlsOptions = {}) {
    const { trackers, iceServers, signalingOptions, signaling, httpClient, ...engineOptions } = options;
    if (trackers !== undefined && signaling !== undefined) {
      throw new ShoalError('INVALID_OPTION', 'options.trackers and options.signaling exclude each other: pass one');
    }
    this.hls = hls;
    this.swarmId = engineOptions.swarmId;
    const peers = signaling ? { signaling } : trackers?.length ? webRtcSignaling({ ...signalingOptions, trackers, iceServers, maxPeers: engineOptions.maxPeers }) : {};
    this.engine = new ShoalEngine(engineOptions, { clock: realClock, http: httpClient ?? new FetchHttpClient(), ...peers });

    const config = hls.config;
    this.previousFragmentLoader = config.fLoader;
    const fallback = (config.fLoader ?? config.loader) as unknown as new (config: HlsConfig) => Loader<LoaderContext>;
    this.loaderClass = createFragmentLoaderClass({
      fallback,
      segmentFor: (context) => this.segmentFor(context),
      loadSegment: (ref) => this.engine.loadSegment(ref),
      warn: (message) => this.engine.warn(message),
      timing: (bytes, originRequest) =>
        loadingTiming({
          bytes, originRequest, nowMs: performance.now(),
          originBytesPerS: this.engine.measuredHttpThroughputBytesPerS,
          ttfbEstimateMs: hls.ttfbEstimate,
        }),
    });
    // hls.js reads config.fLoader on every fragment load, so installing it here, before loadSource(), takes effect.
    config.fLoader = this.loaderClass as unknown as HlsConfig['fLoader'];
    this.listen();
    // A manifest loaded before attachShoal: its levels name the swarm (updateLevels reads hls.url).
    if (hls.levels?.length) this.updateLevels();
    if (hls.media) this.attachMedia(hls.media);
  }

  on<Name extends EngineEventName>(name: Name, listener: EngineListener<Name>): this {
    this.engine.on(name, listener);
    return this;
  }

  off<Name extends EngineEventName>(name: Name, listener: EngineListener<Name>): this {
    this.engine.off(name, listener);
    return this;
  }

  getStats(): EngineStats {
    return this.engine.getStats();
  }

  /** Stops the engine (timers, transfers, peers, trackers) and gives hls.js its own fragment loader back. */
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    for (const unsubscribe of this.unsubscribe.splice(0)) unsubscribe();
    this.attachMedia(null);
    if (this.hls.config.fLoader === (this.loaderClass as unknown)) this.hls.config.fLoader = this.previousFragmentLoader;
    this.engine.destroy();
  }

  private segmentFor(context: FragmentLoaderContext): SegmentRef | undefined {
    const { frag, part } = context;
    if (this.destroyed || part || frag.type !== 'main' || typeof frag.sn !== 'number') return undefined;
    const key = this.streamKeys[frag.level];
    if (key === undefined) return undefined;
    return segmentRef(key, frag, context.url);
  }

  private listen(): void {
    const hls = this.hls;
    const { Events } = hls.constructor as typeof Hls;
    const on = <E extends keyof import('hls.js').HlsListeners>(event: E, listener: import('hls.js').HlsListeners[E]) => {
      hls.on(event, listener);
      this.unsubscribe.push(() => hls.off(event, listener));
    };
    on(Events.MANIFEST_LOADING, (_event, { url }) => {
      this.swarmId = this.engine.options.swarmId ?? swarmIdFromUrl(url);
    });
    on(Events.MANIFEST_PARSED, () => this.updateLevels());
    on(Events.LEVELS_UPDATED, () => this.updateLevels());
    on(Events.LEVEL_LOADED, (_event, { details, level }) => {
      const key = this.streamKeys[level];
      if (key === undefined || this.destroyed) return;
      this.liveLevels.set(level, { live: details.live, edgeS: details.edge ?? details.fragmentEnd });
      // The engine ignores a bitrate that is missing or 0.
      const bandwidthBitsPerS = this.hls.levels?.[level]?.bitrate;
      this.engine.registerStream({ streamKey: key, isLive: details.live, segments: segmentRefs(key, details.fragments), bandwidthBitsPerS });
      this.reportPlayback();
    });
    on(Events.LEVEL_SWITCHING, (_event, { level }) => {
      const key = this.streamKeys[level];
      if (key !== undefined && !this.destroyed) this.engine.setActiveStream(key);
    });
    // MEDIA_ATTACHING fires as hls.attachMedia() takes the element, before the manifest is parsed
    // (MEDIA_ATTACHED may come after it): the engine hears that nothing is buffered before its
    // stream goes active, and meets its peers once the start is safe, not while the first
    // segments load (on a home uplink the offers and handshakes delay them).
    on(Events.MEDIA_ATTACHING, (_event, { media }) => this.attachMedia(media));
    on(Events.MEDIA_DETACHING, () => this.attachMedia(null));
    on(Events.BUFFER_APPENDED, () => this.reportPlayback());
    on(Events.DESTROYING, () => this.destroy());
  }

  private updateLevels(): void {
    if (this.destroyed) return;
    this.swarmId ??= this.hls.url ? swarmIdFromUrl(this.hls.url) : undefined;
    if (this.swarmId === undefined) return;
    this.streamKeys = levelStreamKeys(this.swarmId, this.hls.levels);
    const loading = this.hls.loadLevel;
    const key = this.streamKeys[loading >= 0 ? loading : 0];
    if (key !== undefined) this.engine.setActiveStream(key);
  }

  private readonly onMediaEvent = () => this.reportPlayback();

  private attachMedia(media: HTMLMediaElement | null): void {
    if (this.media === media) return;
    for (const name of MEDIA_EVENTS) this.media?.removeEventListener(name, this.onMediaEvent);
    this.media = this.destroyed ? null : media;
    for (const name of MEDIA_EVENTS) this.media?.addEventListener(name, this.onMediaEvent);
    this.reportPlayback();
  }

  private reportPlayback(): void {
    const media = this.media;
    if (!media || this.destroyed) return;
    const level = this.liveLevels.get(this.hls.loadLevel >= 0 ? this.hls.loadLevel : this.hls.currentLevel);
    const isLive = level?.live ?? false;
    const targetLatency = this.hls.targetLatency;
    this.engine.setPlayback(
      playbackState({
        currentTime: media.currentTime,
        paused: media.paused,
        playbackRate: media.playbackRate,
        buffered: media.buffered,
        isLive,
        liveEdgeS: level?.edgeS,
        targetLatencyS: targetLatency ?? undefined,
      }),
    );
  }
}

/**
 * The browser's signaling, or why there is none: where WebRTC is missing, switched off or throws,
 * Shoal loads over HTTP as hls.js alone would (stats and the `p2p` event say why). A bad option
 * stays the integrator's error and throws.
 */
function webRtcSignaling(options: WebRtcSignalingOptionsInput): { signaling: Signaling } | { p2pUnavailable: string } {
  try {
    return { signaling: createWebRtcSignaling(options) };
  } catch (error) {
    if (isShoalError(error, 'WEBRTC_UNAVAILABLE')) return { p2pUnavailable: error.message };
    throw error;
  }
}

/**
 * Attaches Shoal to an hls.js instance: media segments of the main renditions then load through
 * Shoal (origin + peers); playlists, init segments and keys through hls.js's own loader. Call it
 * before `hls.loadSource()`. Shoal is destroyed with hls.js, or by its own destroy().
 */
export function attachShoal(hls: Hls, options: ShoalHlsOptions = {}): ShoalHls {
  return new ShoalHls(hls, options);
}
