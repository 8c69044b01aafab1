// @shoal/player/frame-client: only the host page's helper for the iframe embed (no player code).
export { ShoalFrameClient } from './frame-client.js';
export type { FrameClientOptions, FrameEventData } from './frame-client.js';
export type { FrameCommand, FrameEvent } from './frame-protocol.js';
export type { PlayerStats } from './types.js';
