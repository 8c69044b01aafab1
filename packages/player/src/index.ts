// @shoal/player: video.js + hls.js + Shoal. For bundlers; `shoal-player.min.js` is the same API
// as a self-contained script with the global `ShoalPlayer`.
import { setDefaultEngineFactory } from './engine-registry.js';
import { createShoalEngine } from './shoal-engine.js';

export { create, ShoalPlayer } from './player.js';
export type { VideoJsPlayer } from './player.js';
export { playerDefaults, resolvePlayerOptions } from './options.js';
export type { P2pEngineFactory, P2pEngineSettings, ResolvedPlayerOptions, ShoalPlayerOptions } from './options.js';
export type { P2pCounters, P2pEngine, P2pState, PlaybackEngine, PlayerStats, RenditionInfo } from './types.js';
export { PlayerError } from './errors.js';
export type { PlayerErrorCode } from './errors.js';
export { detectCapabilities, planPlayback } from './capabilities.js';
export type { BrowserCapabilities, PlaybackPlan } from './capabilities.js';
export { registerHlsSourceHandler, sessionOf } from './hls-source-handler.js';
export { HlsSession } from './hls-session.js';
export type { ShoalTechOptions } from './hls-session.js';
export { setDefaultEngineFactory } from './engine-registry.js';
export { createShoalEngine, ShoalP2pEngine } from './shoal-engine.js';
export { embedAttributes, embedSnippets, optionsFromAttributes, optionsFromQuery } from './embed-attributes.js';
export { mountEmbeds, playerOf } from './embed-mount.js';
export { startEmbedFrame } from './frame-page.js';
export type { EmbedFrame } from './frame-page.js';
export { ShoalFrameClient } from './frame-client.js';
export type { FrameClientOptions, FrameEventData } from './frame-client.js';
export type { FrameCommand, FrameEvent } from './frame-protocol.js';
export { injectStyles } from './styles.js';

// Shoal is the engine unless a player's options name another.
setDefaultEngineFactory(createShoalEngine);
