// Public entry of @shoal/tracker.

import { MessageHandler, type MessageHandlerOptions } from './message-handler.js';

export { startTracker, type RunningTracker, type StartDependencies } from './server.js';
export { DEFAULT_OPTIONS, ConfigError, resolveOptions, type TrackerOptions } from './config.js';
export type { AnnounceFilter, MessageCounters } from './message-handler.js';
export type { TrackerStats } from './stats.js';
export { UWS_CANDIDATES, UwsLoadError } from './uws-loader.js';
export { binaryIdToHex, hexToBinaryId, isBinaryId } from './protocol.js';
export { SwarmRegistry, Swarm, type PeerEntry, type AnnounceEvent } from './swarm-registry.js';
export { MessageHandler, Connection, type ClientSocket, type MessageHandlerOptions } from './message-handler.js';

// The names before issue 10, kept so embedders keep compiling; to be removed in a later release.
/** @deprecated renamed MessageHandler */
export const TrackerEngine = MessageHandler;
/** @deprecated renamed MessageHandler */
export type TrackerEngine = MessageHandler;
/** @deprecated renamed MessageHandlerOptions */
export type EngineOptions = MessageHandlerOptions;
