// Shoal as a video.js plugin: `registerShoalPlugin(videojs)` once, then `player.shoal(options)` on
// a player made with the app's own video.js. HLS sources of that player then play through hls.js
// with Shoal; its quality level list is filled; the stats view and quality menu are opt-in.
// This module imports no video.js: it works on the copy it is given, so an app bundles one.
import { detectCapabilities, planPlayback, type BrowserCapabilities, type PlaybackPlan } from './capabilities.js';
import { PlayerError } from './errors.js';
import type { HlsSession, ShoalTechOptions } from './hls-session.js';
import { isHlsSource, playThroughHls, registerHlsSourceHandler, sessionOf, type SourceObject } from './hls-source-handler.js';
import { resolvePluginOptions, type ResolvedPluginOptions, type ShoalPluginOptions } from './options.js';
import { mirrorQualityLevels } from './quality-levels.js';
import { createShoalEngine } from './shoal-engine.js';
import type { PlayerStats } from './types.js';
import { qualityMenuName, registerQualityMenu } from './ui/quality-menu.js';
import { installStatsView, type StatsView } from './ui/stats-view.js';
import type { ComponentLike, Player, VideoJsNamespace } from './video-js-api.js';

/** What `player.shoal(options)` returns. */
export interface PlayerShoal {
  readonly options: ResolvedPluginOptions;
  /** How this browser plays (hls.js or native) and whether P2P runs, with the reason when not. */
  readonly plan: PlaybackPlan;
  /** The hls.js playback of the current source (`.hls`, `.engine`), or undefined (native, no source yet). */
  session(): HlsSession | undefined;
  getStats(): PlayerStats;
  /** The stats view, when the `statsView` option added it. */
  readonly statsView: StatsView | undefined;
}

const added = new WeakMap<Player, PlayerShoal>();

/** Registers the `shoal` plugin (and Shoal's components) with this copy of video.js. Safe to call twice. */
export function registerShoalPlugin(vjs: VideoJsNamespace): void {
  if (vjs.getPlugin('shoal')) return;
  const plugin = function shoal(this: Player, options?: ShoalPluginOptions): PlayerShoal {
    return addShoal(vjs, this, options);
  };
  vjs.registerPlugin('shoal', plugin as never);
}

/** What the `shoal` plugin does; ShoalPlayer calls it on the player it creates. */
export function addShoal(vjs: VideoJsNamespace, player: Player, input?: ShoalPluginOptions, capabilities: BrowserCapabilities = detectCapabilities()): PlayerShoal {
  if (added.has(player)) throw new PlayerError('INVALID_OPTION', 'shoal(): Shoal was already added to this player');
  const options = resolvePluginOptions(input);
  registerHlsSourceHandler(vjs);
  registerQualityMenu(vjs, sessionOf);
  const plan = planPlayback(capabilities, options.p2p, options.trackers.length);
  const techOptions: ShoalTechOptions = { hlsConfig: options.hlsConfig, p2p: plan.p2p, p2pNote: plan.p2pNote };
  if (plan.p2p === 'on') {
    const engineFactory = options.engineFactory ?? createShoalEngine;
    const { trackers, iceServers, engineOptions, integrity, requireVerifiedP2P } = options;
    const settings = { trackers, iceServers, engineOptions, integrity, requireVerifiedP2P };
    techOptions.createEngine = () => engineFactory(settings);
  }
  playThroughHls(player, techOptions);
  mirrorQualityLevels(player, sessionOf);

  const controlBar = (player as unknown as ComponentLike).getChild('ControlBar');
  if (options.qualityMenu && controlBar) {
    const fullscreen = controlBar.getChild('FullscreenToggle');
    controlBar.addChild(qualityMenuName, {}, fullscreen ? controlBar.children().indexOf(fullscreen) : controlBar.children().length);
  }
  const handle: PlayerShoal = {
    options,
    plan,
    session: () => sessionOf(player),
    getStats: () => statsOf(player, plan),
    statsView: options.statsView ? installStatsView(player, () => statsOf(player, plan), options.statsView) : undefined,
  };
  added.set(player, handle);

  // A source set before Shoal was added plays through VHS or natively: load it again through hls.js.
  const current = player.currentSource() as unknown as SourceObject | undefined;
  if (plan.playback === 'hls.js' && current?.src && isHlsSource(current) && !sessionOf(player)) {
    player.src(player.currentSources() as never);
  }
  return handle;
}

/** Shoal on this player, if it was added. */
export function shoalOf(player: Player): PlayerShoal | undefined {
  return added.get(player);
}

function statsOf(player: Player, plan: PlaybackPlan): PlayerStats {
  const session = sessionOf(player);
  if (session) return session.getStats();
  // Native playback (or no source yet): what the element itself knows.
  const media = player.el().querySelector('video');
  let bufferS = 0;
  if (media) {
    for (let i = 0; i < media.buffered.length; i += 1) {
      if (media.buffered.start(i) <= media.currentTime && media.currentTime <= media.buffered.end(i)) bufferS = media.buffered.end(i) - media.currentTime;
    }
  }
  return {
    playback: plan.playback,
    p2p: plan.p2p,
    p2pNote: plan.p2pNote,
    httpBytes: 0,
    p2pBytes: 0,
    uploadedBytes: 0,
    peers: 0,
    downloadBytesPerS: 0,
    uploadBytesPerS: 0,
    p2pShare: null,
    rendition: plan.playback === 'native' && media ? { index: -1, width: media.videoWidth, height: media.videoHeight, bitrate: 0, auto: true } : null,
    bufferS,
    liveLatencyS: null,
    currentTimeS: media?.currentTime ?? 0,
    paused: media?.paused ?? true,
  };
}
