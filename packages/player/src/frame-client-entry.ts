// @shoal/player/frame-client: only the host page's helper for the iframe embed (no player code).
export { ShoalFrameClient } from './frame-client.js';
export type { FrameClientOptions } from './frame-client.js';
export type { CommandArgs, CommandResults, FrameCommand, FrameEvent, FrameEventData, PlaybackStatus, ReadyInfo } from './frame-protocol.js';
export type { PlaybackState } from './playback-state.js';
export type { Resolution } from './resolutions.js';
export type { Caption } from './captions.js';
export type { PlayerStats, RenditionInfo } from './types.js';
export type { FrameErrorInfo, PlayerErrorCode } from './errors.js';
export { PlayerError } from './errors.js';
