// ShoalPlayer: a video.js player playing HLS through hls.js with the P2P engine, the quality menu
// and the stats view; what `create()`, the script-tag embed and the iframe page all build.
import videojs from 'video.js/core.es.js';
import { detectCapabilities, planPlayback, type BrowserCapabilities, type PlaybackPlan } from './capabilities.js';
import { defaultEngineFactory } from './engine-registry.js';
import { PlayerError } from './errors.js';
import type { ShoalTechOptions } from './hls-session.js';
import { registerHlsSourceHandler, sessionOf } from './hls-source-handler.js';
import { resolvePlayerOptions, type ResolvedPlayerOptions, type ShoalPlayerOptions } from './options.js';
import { injectStyles } from './styles.js';
import type { P2pEngine, PlayerStats } from './types.js';
import { qualityMenuName, registerQualityMenu } from './ui/quality-menu.js';
import { installStatsView, type StatsView } from './ui/stats-view.js';
import { showPlayerError, type ComponentLike, type Player } from './video-js-api.js';

export type { Player as VideoJsPlayer };

const hlsMimeType = 'application/x-mpegURL';

function setUp(): void {
  registerHlsSourceHandler(videojs);
  registerQualityMenu(videojs, (player) => sessionOf(player));
}

function resolveTarget(target: Element | string): Element {
  const element = typeof target === 'string' ? document.querySelector(target) : target;
  if (!element) throw new PlayerError('NO_ELEMENT', `no element matches ${JSON.stringify(target)}`);
  return element;
}

export class ShoalPlayer {
  readonly videojs: Player;
  readonly options: ResolvedPlayerOptions;
  readonly plan: PlaybackPlan;
  private readonly statsView: StatsView;
  private destroyed = false;

  constructor(target: Element | string, options: ShoalPlayerOptions, capabilities: BrowserCapabilities = detectCapabilities()) {
    this.options = resolvePlayerOptions(options);
    setUp();
    if (this.options.injectStyles) injectStyles();
    const host = resolveTarget(target);
    const engineFactory = this.options.engineFactory ?? defaultEngineFactory();
    const plan = planPlayback(capabilities, this.options.p2p, this.options.trackers.length);
    if (plan.p2p === 'on' && !engineFactory) {
      this.plan = { ...plan, p2p: 'off', p2pNote: 'P2P off: no P2P engine is bundled with this build.' };
    } else {
      this.plan = plan;
    }
    let video: HTMLVideoElement;
    if (host instanceof HTMLVideoElement) {
      video = host;
    } else {
      video = document.createElement('video');
      host.append(video);
    }
    video.classList.add('video-js', 'vjs-big-play-centered', 'shoal-player');
    video.setAttribute('playsinline', '');
    const techOptions: ShoalTechOptions = {
      hlsConfig: this.options.hlsConfig,
      p2p: this.plan.p2p,
      p2pNote: this.plan.p2pNote,
    };
    if (this.plan.p2p === 'on' && engineFactory) {
      const settings = { trackers: this.options.trackers, engineOptions: this.options.engineOptions };
      techOptions.createEngine = () => engineFactory(settings);
    }
    const videojsOptions = this.options.videojsOptions;
    const html5Options = (videojsOptions.html5 as Record<string, unknown> | undefined) ?? {};
    this.videojs = videojs(video, {
      controls: this.options.controls,
      // 'any' falls back to muted autoplay where the browser blocks sound.
      autoplay: this.options.autoplay ? (this.options.muted ? 'muted' : 'any') : false,
      muted: this.options.muted,
      poster: this.options.poster,
      fluid: this.options.fluid,
      preload: 'auto',
      playsinline: true,
      liveui: true,
      ...videojsOptions,
      html5: { ...html5Options, shoal: techOptions },
    });
    const controlBar = (this.videojs as unknown as ComponentLike).getChild('ControlBar');
    if (controlBar) {
      const children = controlBar.children();
      const fullscreen = controlBar.getChild('FullscreenToggle');
      controlBar.addChild(qualityMenuName, {}, fullscreen ? children.indexOf(fullscreen) : children.length);
    }
    this.statsView = installStatsView(this.videojs, () => this.getStats(), { open: this.options.statsOpen });
    if (this.plan.engine === 'none') {
      showPlayerError(this.videojs, 'This browser cannot play HLS video: it has neither Media Source Extensions nor native HLS.');
    } else {
      this.videojs.src({ src: this.options.src, type: hlsMimeType });
    }
  }

  /** The hls.js instance of the current source, or null (native playback, or not loaded yet). */
  get hls() {
    return sessionOf(this.videojs)?.hls ?? null;
  }

  /** The P2P engine of the current source, or null (P2P off or not started). */
  get engine(): P2pEngine | null {
    return sessionOf(this.videojs)?.engine ?? null;
  }

  /** The <video> element video.js plays in. */
  get media(): HTMLVideoElement {
    return this.videojs.el().querySelector('video')!;
  }

  getStats(): PlayerStats {
    const session = sessionOf(this.videojs);
    if (session) return session.getStats();
    const media = this.media;
    let bufferS = 0;
    for (let i = 0; i < media.buffered.length; i += 1) {
      if (media.buffered.start(i) <= media.currentTime && media.currentTime <= media.buffered.end(i)) bufferS = media.buffered.end(i) - media.currentTime;
    }
    return {
      engine: this.plan.engine,
      p2p: this.plan.p2p,
      p2pNote: this.plan.p2pNote,
      httpBytes: 0,
      p2pBytes: 0,
      uploadedBytes: 0,
      peers: 0,
      downloadBytesPerS: 0,
      uploadBytesPerS: 0,
      p2pShare: null,
      rendition: this.plan.engine === 'native' ? { index: -1, width: media.videoWidth, height: media.videoHeight, bitrate: 0, auto: true } : null,
      bufferS,
      liveLatencyS: null,
      currentTimeS: media.currentTime,
      paused: media.paused,
    };
  }

  play(): Promise<void> {
    return Promise.resolve(this.videojs.play()).then(() => undefined);
  }

  pause(): void {
    this.videojs.pause();
  }

  /** Seconds on the media timeline; clamped to what is seekable. */
  seek(seconds: number): void {
    if (!Number.isFinite(seconds)) throw new PlayerError('INVALID_OPTION', `seek: ${seconds} is not a number of seconds`);
    this.videojs.currentTime(seconds);
  }

  /** 0 to 1; unmutes when above 0. */
  setVolume(volume: number): void {
    if (!Number.isFinite(volume) || volume < 0 || volume > 1) throw new PlayerError('INVALID_OPTION', `setVolume: ${volume} is not between 0 and 1`);
    this.videojs.volume(volume);
    if (volume > 0) this.videojs.muted(false);
  }

  /** Opens or closes the stats panel (toggles without an argument). */
  toggleStats(open?: boolean): void {
    this.statsView.toggle(open);
  }

  get statsOpen(): boolean {
    return this.statsView.open;
  }

  /** video.js events: 'playing', 'pause', 'ended', 'error', 'timeupdate', … */
  on(event: string, listener: () => void): void {
    this.videojs.on(event, listener);
  }

  off(event: string, listener: () => void): void {
    this.videojs.off(event, listener);
  }

  /** Stops playback and P2P, removes the player's elements. */
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.videojs.dispose();
  }
}

export function create(target: Element | string, options: ShoalPlayerOptions): ShoalPlayer {
  return new ShoalPlayer(target, options);
}
