// @shoal/player: video.js + hls.js + Shoal. For bundlers; `shoal-player.min.js` is the same API
// as a self-contained script with the global `ShoalPlayer`. The package has no side effects on
// import: importing one piece (the frame client, the plugin) bundles that piece alone.
export { create, ShoalPlayer } from './player.js';
export type { VideoJsPlayer } from './player.js';
export { playerDefaults, pluginDefaults, resolvePlayerOptions, resolvePluginOptions } from './options.js';
export type { P2pEngineFactory, P2pEngineSettings, ResolvedPlayerOptions, ResolvedPluginOptions, ShoalPlayerOptions, ShoalPluginOptions } from './options.js';
export type { P2pCounters, P2pEngine, P2pState, Playback, PlayerStats, RenditionInfo } from './types.js';
export type { PlaybackState } from './playback-state.js';
export type { Resolution } from './resolutions.js';
export type { Caption } from './captions.js';
export { PlayerError } from './errors.js';
export type { FrameErrorInfo, PlayerErrorCode } from './errors.js';
export { detectCapabilities, planPlayback } from './capabilities.js';
export type { BrowserCapabilities, PlaybackPlan } from './capabilities.js';
export { addShoal, registerShoalPlugin, shoalOf } from './videojs-plugin.js';
export type { PlayerShoal } from './videojs-plugin.js';
export { sessionOf } from './hls-source-handler.js';
export { HlsSession } from './hls-session.js';
export type { ShoalTechOptions } from './hls-session.js';
export { createShoalEngine, ShoalP2pEngine } from './shoal-engine.js';
export { embedAttributes, embedSnippets, optionsFromAttributes, optionsFromQuery, parseIceServers, parseTime } from './embed-attributes.js';
export type { EmbedSnippetSettings } from './embed-attributes.js';
export { mountEmbeds, playerOf } from './embed-mount.js';
export { startEmbedFrame } from './frame-page.js';
export type { EmbedFrame } from './frame-page.js';
export { ShoalFrameClient } from './frame-client.js';
export type { FrameClientOptions } from './frame-client.js';
export type { CommandArgs, CommandResults, FrameCommand, FrameEvent, FrameEventData, PlaybackStatus, ReadyInfo } from './frame-protocol.js';
