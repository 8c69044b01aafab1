// ShoalPlayer: a video.js player (video.js's core build) with Shoal added, the quality menu and the
// stats view; what `create()`, the script-tag embed and the iframe page all build. An app that has
// its own video.js uses the plugin instead (videojs-plugin.ts), and bundles one video.js.
import videojs from 'video.js/core.es.js';
import { captionList, preferCaptionLanguage, showCaption, type Caption, type HasTextTracks } from './captions.js';
import { detectCapabilities, type BrowserCapabilities, type PlaybackPlan } from './capabilities.js';
import { PlayerError } from './errors.js';
import { resolvePlayerOptions, type ResolvedPlayerOptions, type ShoalPlayerOptions } from './options.js';
import { applyPlaybackRange } from './playback-range.js';
import { playbackStateOf, type PlaybackState } from './playback-state.js';
import type { Resolution } from './resolutions.js';
import type { P2pEngine, PlayerStats } from './types.js';
import { installTitleBar } from './ui/title-bar.js';
import { showPlayerError, type Player } from './video-js-api.js';
import { addShoal, type PlayerShoal } from './videojs-plugin.js';

export type { Player as VideoJsPlayer };

const hlsMimeType = 'application/x-mpegURL';
/** The speeds the control bar's rate menu offers. */
const playbackRates = [0.5, 0.75, 1, 1.25, 1.5, 2];

function resolveTarget(target: Element | string): Element {
  const element = typeof target === 'string' ? document.querySelector(target) : target;
  if (!element) throw new PlayerError('NO_ELEMENT', `no element matches ${JSON.stringify(target)}`);
  return element;
}

export class ShoalPlayer {
  readonly videojs: Player;
  readonly options: ResolvedPlayerOptions;
  readonly plan: PlaybackPlan;
  /** Shoal on this player: the plugin's handle. */
  readonly shoal: PlayerShoal;
  private destroyed = false;

  constructor(target: Element | string, options: ShoalPlayerOptions, capabilities: BrowserCapabilities = detectCapabilities()) {
    this.options = resolvePlayerOptions(options);
    const host = resolveTarget(target);
    let video: HTMLVideoElement;
    if (host instanceof HTMLVideoElement) {
      video = host;
    } else {
      video = document.createElement('video');
      host.append(video);
    }
    video.classList.add('video-js', 'vjs-big-play-centered', 'shoal-player');
    video.setAttribute('playsinline', '');
    // hls.js plays through ManagedMediaSource where there is one (Safari 17.1+, WebKit), which opens
    // only on a video that offers no remote playback (AirPlay) of its own.
    if ('ManagedMediaSource' in globalThis) video.disableRemotePlayback = true;
    const { trackers, p2p, iceServers, hlsConfig, engineOptions, engineFactory, statsOpen, start, stop, loop, title, subtitle, integrity, requireVerifiedP2P } = this.options;
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
      playbackRates,
      ...this.options.videojsOptions,
    });
    this.shoal = addShoal(
      videojs,
      this.videojs,
      { trackers, p2p, iceServers, hlsConfig, engineOptions, engineFactory, integrity, requireVerifiedP2P, qualityMenu: true, statsView: { open: statsOpen } },
      capabilities,
    );
    this.plan = this.shoal.plan;
    applyPlaybackRange(this.videojs, { start, stop, loop }, () => this.isLive());
    if (title !== undefined) installTitleBar(this.videojs, title);
    if (subtitle !== undefined) preferCaptionLanguage(this.captionHost, subtitle);
    if (this.plan.playback === 'none') {
      showPlayerError(this.videojs, 'This browser cannot play HLS video: it has neither Media Source Extensions nor native HLS.');
    } else {
      this.videojs.src({ src: this.options.src, type: hlsMimeType });
    }
  }

  /** The hls.js instance of the current source, or null (native playback, or not loaded yet). */
  get hls() {
    return this.shoal.session()?.hls ?? null;
  }

  /** The P2P engine of the current source, or null (P2P off or not started). */
  get engine(): P2pEngine | null {
    return this.shoal.session()?.engine ?? null;
  }

  /** The <video> element video.js plays in. */
  get media(): HTMLVideoElement {
    return this.videojs.el().querySelector('video')!;
  }

  getStats(): PlayerStats {
    return this.shoal.getStats();
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

  getCurrentTime(): number {
    return this.videojs.currentTime() ?? 0;
  }

  /** Seconds; 0 before the stream's metadata, Infinity for live. */
  getDuration(): number {
    if (this.isLive()) return Number.POSITIVE_INFINITY;
    const duration = this.videojs.duration() ?? 0;
    return Number.isNaN(duration) ? 0 : duration;
  }

  /** 0 to 1; unmutes when above 0. */
  setVolume(volume: number): void {
    if (!Number.isFinite(volume) || volume < 0 || volume > 1) throw new PlayerError('INVALID_OPTION', `setVolume: ${volume} is not between 0 and 1`);
    this.videojs.volume(volume);
    if (volume > 0) this.videojs.muted(false);
  }

  getVolume(): number {
    return this.videojs.volume() ?? 1;
  }

  setMuted(muted: boolean): void {
    this.videojs.muted(muted === true);
  }

  isMuted(): boolean {
    return this.videojs.muted() === true;
  }

  /** 1 is normal speed; browsers play 0.0625 to 16. */
  setPlaybackRate(rate: number): void {
    if (!Number.isFinite(rate) || rate < 0.0625 || rate > 16) throw new PlayerError('INVALID_OPTION', `setPlaybackRate: ${rate} is not between 0.0625 and 16`);
    this.videojs.playbackRate(rate);
  }

  getPlaybackRate(): number {
    return this.videojs.playbackRate() ?? 1;
  }

  /** The speeds the control bar offers. */
  getPlaybackRates(): number[] {
    return [...this.videojs.playbackRates()];
  }

  /** "Auto" (id -1) and each rendition, highest first; empty where the browser plays HLS natively. */
  getResolutions(): Resolution[] {
    return this.shoal.session()?.resolutions() ?? [];
  }

  /** A rendition's id from getResolutions(), or -1 for automatic. */
  setResolution(id: number): void {
    const session = this.shoal.session();
    if (!session) throw new PlayerError('UNSUPPORTED', 'setResolution: no rendition to choose (native playback, or no stream loaded yet)');
    session.selectLevel(id);
  }

  getState(): PlaybackState {
    return playbackStateOf(this.videojs);
  }

  /**
   * Whether the stream is live: from hls.js's playlist (a live stream's duration there is the
   * window's end, not Infinity), or the element's Infinity duration when the browser plays it;
   * undefined before the playlist is read.
   */
  isLive(): boolean | undefined {
    const hls = this.hls;
    if (hls) return hls.latestLevelDetails?.live;
    const duration = this.videojs.el()?.querySelector('video')?.duration ?? Number.NaN;
    return Number.isNaN(duration) ? undefined : duration === Number.POSITIVE_INFINITY;
  }

  /** True while playing or buffering to play; false when paused, ended or not started. */
  isPlaying(): boolean {
    const state = this.getState();
    return state === 'playing' || state === 'buffering';
  }

  /** The stream's subtitles and captions (and any other text track of kind subtitles/captions). */
  getCaptions(): Caption[] {
    return captionList(this.captionHost);
  }

  /** Shows the caption with this id from getCaptions(); null shows none. */
  setCaption(id: string | null): void {
    if (id !== null && typeof id !== 'string') throw new PlayerError('INVALID_OPTION', `setCaption: expected a caption id from getCaptions() or null, got ${JSON.stringify(id)}`);
    showCaption(this.captionHost, id);
  }

  /** video.js's text track list, as captions.ts reads it (video.js types its own TextTrack). */
  private get captionHost(): HasTextTracks {
    return this.videojs as unknown as HasTextTracks;
  }

  /** Opens or closes the stats panel (toggles without an argument). */
  toggleStats(open?: boolean): void {
    this.shoal.statsView?.toggle(open);
  }

  get statsOpen(): boolean {
    return this.shoal.statsView?.open ?? false;
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
