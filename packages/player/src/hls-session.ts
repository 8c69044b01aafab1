// One playback of one HLS source through hls.js (and the P2P engine, when P2P is on), bound to
// one video element. Created by the video.js source handler; `dispose` leaves nothing running.
import Hls from 'hls.js';
import type { HlsConfig } from 'hls.js';
import { PlayerError } from './errors.js';
import { resolutionList, type Resolution } from './resolutions.js';
import { StatsMeter } from './stats-meter.js';
import type { P2pCounters, P2pEngine, P2pState, PlayerStats, RenditionInfo } from './types.js';

/** What a video.js player hands the source handler through its tech options (`html5.shoal`). */
export interface ShoalTechOptions {
  /** hls.js config; Shoal's loaders are merged over it. */
  hlsConfig?: Partial<HlsConfig> | Record<string, unknown>;
  /** Creates the P2P engine for each new source; absent: hls.js alone. */
  createEngine?: () => P2pEngine;
  /** What the stats panel says when there is no engine (why P2P is off). */
  p2p?: P2pState;
  p2pNote?: string;
}

export interface SessionEvents {
  /** The level list or the current level changed (the quality menu redraws). */
  levels(): void;
  /** hls.js gave up; the message is for people. */
  fatal(error: PlayerError): void;
}

const zeroCounters: P2pCounters = { httpBytes: 0, p2pBytes: 0, uploadedBytes: 0, peers: 0 };

export class HlsSession {
  readonly hls: Hls;
  readonly engine: P2pEngine | null;
  private p2pState: P2pState;
  private p2pNote: string;
  private readonly meter = new StatsMeter();
  private readonly sampleTimer: ReturnType<typeof setInterval>;
  private mediaRecoveries = 0;
  private disposed = false;

  constructor(
    readonly src: string,
    private readonly media: HTMLMediaElement,
    options: ShoalTechOptions,
    private readonly events: SessionEvents,
  ) {
    this.p2pState = options.p2p ?? (options.createEngine ? 'on' : 'off');
    this.p2pNote = options.p2pNote ?? '';
    let engine: P2pEngine | null = null;
    if (options.createEngine) {
      try {
        engine = options.createEngine();
        this.p2pState = 'on';
      } catch (error) {
        // P2P is an optimisation: the video still plays over HTTP, and the panel says why.
        this.p2pState = 'unavailable';
        this.p2pNote = `P2P failed to start: ${error instanceof Error ? error.message : String(error)}`;
      }
    }
    this.hls = new Hls({ ...(options.hlsConfig ?? {}), ...(engine?.hlsConfig() ?? {}) } as Partial<HlsConfig>);
    if (engine) {
      try {
        engine.attach(this.hls);
      } catch (error) {
        this.p2pState = 'unavailable';
        this.p2pNote = `P2P failed to start: ${error instanceof Error ? error.message : String(error)}`;
        engine.destroy();
        engine = null;
      }
    }
    this.engine = engine;
    this.hls.on(Hls.Events.MANIFEST_PARSED, () => this.events.levels());
    this.hls.on(Hls.Events.LEVELS_UPDATED, () => this.events.levels());
    this.hls.on(Hls.Events.LEVEL_SWITCHED, () => this.events.levels());
    this.hls.on(Hls.Events.ERROR, (_event, data) => {
      if (!data.fatal || this.disposed) return;
      // A decode error is often recoverable once or twice by re-creating the SourceBuffers.
      if (data.type === Hls.ErrorTypes.MEDIA_ERROR && this.mediaRecoveries < 2) {
        this.mediaRecoveries += 1;
        this.hls.recoverMediaError();
        return;
      }
      const status = data.response?.code ? ` (HTTP ${data.response.code})` : '';
      const what = data.type === Hls.ErrorTypes.NETWORK_ERROR ? 'The stream could not be loaded' : 'The stream could not be played';
      this.events.fatal(new PlayerError('PLAYBACK_FATAL', `${what}: ${data.details}${status}.`));
    });
    this.hls.loadSource(src);
    this.hls.attachMedia(media);
    this.sampleTimer = setInterval(() => this.meter.record(Date.now(), this.counters()), 1_000);
    this.meter.record(Date.now(), zeroCounters);
  }

  counters(): P2pCounters {
    if (!this.engine) return zeroCounters;
    try {
      return this.engine.counters();
    } catch {
      return zeroCounters;
    }
  }

  /** The engine's own word once it runs (no WebRTC here, no tracker answers), else what the start decided. */
  private p2pStatus(): { p2p: P2pState; p2pNote: string } {
    try {
      const status = this.engine?.status?.();
      if (status) return { p2p: status.state, p2pNote: status.state === 'on' ? '' : `P2P ${status.state}: ${status.reason}; playing over HTTP.` };
    } catch {
      // An engine that cannot report keeps the start's verdict; its counters say the rest.
    }
    return { p2p: this.p2pState, p2pNote: this.p2pNote };
  }

  rendition(): RenditionInfo | null {
    const index = this.hls.currentLevel;
    const level = index >= 0 ? this.hls.levels[index] : undefined;
    if (!level) return null;
    return { index, width: level.width, height: level.height, bitrate: level.bitrate, auto: this.hls.autoLevelEnabled };
  }

  getStats(): PlayerStats {
    const counters = this.counters();
    const delivered = counters.httpBytes + counters.p2pBytes;
    const latency = this.hls.latency;
    const isLive = this.hls.levels[Math.max(0, this.hls.currentLevel)]?.details?.live ?? false;
    const { p2p, p2pNote } = this.p2pStatus();
    return {
      playback: 'hls.js',
      p2p,
      p2pNote,
      ...counters,
      ...this.meter.speeds(),
      p2pShare: delivered > 0 ? counters.p2pBytes / delivered : null,
      rendition: this.rendition(),
      bufferS: bufferAhead(this.media),
      liveLatencyS: isLive && Number.isFinite(latency) && latency > 0 ? latency : null,
      currentTimeS: this.media.currentTime,
      paused: this.media.paused,
    };
  }

  /** "Auto" and every level; the active one is what the viewer picked, even before hls.js has switched. */
  resolutions(): Resolution[] {
    return resolutionList(this.hls.levels, this.hls.autoLevelEnabled ? -1 : this.hls.manualLevel);
  }

  /**
   * -1 hands the choice back to hls.js's ABR (from the next segment on); a level index switches
   * now, dropping what is buffered ahead, as someone who picked a quality expects.
   */
  selectLevel(index: number): void {
    if (!Number.isInteger(index) || index < -1 || index >= this.hls.levels.length) {
      throw new PlayerError('INVALID_OPTION', `resolution: ${index} is not -1 (auto) or a level index below ${this.hls.levels.length}`);
    }
    if (index < 0) this.hls.nextLevel = -1;
    else this.hls.currentLevel = index;
    this.events.levels();
  }

  /**
   * The levels a viewer allows (video.js quality pickers enable and disable levels): one level
   * plays that level; several hand the choice to ABR, capped at the highest allowed (hls.js has no
   * floor per level); none changes nothing.
   */
  allowLevels(allowed: readonly boolean[]): void {
    const indices = allowed.flatMap((isAllowed, index) => (isAllowed && index < this.hls.levels.length ? [index] : []));
    if (indices.length === 0) return;
    if (indices.length === 1) return this.selectLevel(indices[0]!);
    // hls.js orders levels by bitrate, lowest first.
    this.hls.autoLevelCapping = indices.length === this.hls.levels.length ? -1 : Math.max(...indices);
    if (!this.hls.autoLevelEnabled) this.hls.nextLevel = -1;
    this.events.levels();
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    clearInterval(this.sampleTimer);
    this.hls.destroy();
    this.engine?.destroy();
  }
}

export function bufferAhead(media: HTMLMediaElement): number {
  const position = media.currentTime;
  const ranges = media.buffered;
  for (let i = 0; i < ranges.length; i += 1) {
    // A small tolerance: playback often sits a few milliseconds before a range starts.
    if (ranges.start(i) <= position + 0.1 && position <= ranges.end(i)) return Math.max(0, ranges.end(i) - position);
  }
  return 0;
}
