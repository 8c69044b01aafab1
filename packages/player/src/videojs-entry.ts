// @shoal/player/videojs: the video.js plugin alone, for apps that have their own video.js. It
// imports no video.js, so the app bundles one copy:
//   import videojs from 'video.js';
//   import { registerShoalPlugin } from '@shoal/player/videojs';
//   registerShoalPlugin(videojs);
//   videojs('my-video').shoal({ trackers: ['wss://tracker.example/announce'] });
export { addShoal, registerShoalPlugin, shoalOf } from './videojs-plugin.js';
export type { PlayerShoal } from './videojs-plugin.js';
export { pluginDefaults, resolvePluginOptions } from './options.js';
export type { P2pEngineFactory, P2pEngineSettings, ResolvedPluginOptions, ShoalPluginOptions } from './options.js';
export type { P2pCounters, P2pEngine, P2pState, Playback, PlayerStats, RenditionInfo } from './types.js';
export type { Resolution } from './resolutions.js';
export type { PlaybackPlan } from './capabilities.js';
export { PlayerError } from './errors.js';
export type { PlayerErrorCode } from './errors.js';
export { sessionOf } from './hls-source-handler.js';
export type { HlsSession } from './hls-session.js';
