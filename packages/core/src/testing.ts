// @shoal/core/testing: the testing kit of core's own tests and of the swarm simulator (e2e/src/sim),
// Node only. A virtual clock with a timer heap, simulated hosts on a flow network and data
// channels between them, a seeded PRNG, a live (or VOD) origin and an hls.js-like player model;
// and the protocol facts a simulator needs. Not part of the engine's public API: no semver promise.
export { EventQueue, type SimEvent } from './testing/event-queue.js';
export { VirtualClock } from './testing/virtual-clock.js';
export { Prng } from './testing/prng.js';
export { FlowNetwork, Pipe, SimHost, type LinkCapacity } from './testing/flow-network.js';
export { ChannelLedger, SimChannelEnd, connectHosts, linkTransports, type LinkOptions } from './testing/sim-channel.js';
export { SimOrigin, HTTP_CHUNK_BYTES, type OriginCounters, type OriginOptions, type Rendition, type StreamSpec } from './testing/sim-origin.js';
/** TCP's initial congestion window the simulated origin starts each transfer with (the one the engine's HTTP budgets assume). */
export { TCP_INITIAL_WINDOW_BYTES as INITIAL_WINDOW_BYTES } from './plan/scheduler.js';
export { PlayerModel, DEFAULT_PLAYER_PARAMS, type PlayerParams, type PlayerSetup, type StallRecord, type ViewerRecord } from './testing/player-model.js';
export { pickEvictionVictim } from './store/segment-store.js';
export { CHUNK_BYTES, DATA_HEADER_BYTES, MessageType } from './wire/peer-protocol.js';
export { DEFAULT_SIGNALING_OPTIONS } from './webrtc/signaling-options.js';
