// Public entry of @shoal/tracker.

export { startTracker, type RunningTracker, type StartDependencies } from './server.js';
export { DEFAULT_OPTIONS, ConfigError, resolveOptions, type TrackerOptions } from './config.js';
export type { AnnounceFilter, MessageCounters } from './message-handler.js';
export type { TrackerStats } from './stats.js';
export { UWS_CANDIDATES, UwsLoadError } from './uws-loader.js';
export { PortInUseError } from './port-claim.js';
export { binaryIdToHex, hexToBinaryId, isBinaryId } from './protocol.js';
export { SwarmRegistry, Swarm, type PeerEntry, type AnnounceEvent, type AnnounceInput, type AnnounceResult, type RegistryCounts, type SwarmRegistryOptions } from './swarm-registry.js';
export { MessageHandler, type MessageHandlerOptions } from './message-handler.js';
export { Connection, type ClientSocket } from './connection.js';

