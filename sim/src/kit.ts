// @shoal/sim/kit: the testing kit of core's own tests and of the simulator, Node only. A virtual
// clock with a timer heap, simulated hosts on a flow network and data channels between them, a
// seeded PRNG, a live (or VOD) origin and an hls.js-like player model. It talks to the engine only
// through @shoal/core's public entries, as any integration does.
export { EventQueue, type SimEvent } from './kit/event-queue.js';
export { VirtualClock } from './kit/virtual-clock.js';
export { Prng } from './kit/prng.js';
export { FlowNetwork, Pipe, SimHost, type LinkCapacity } from './kit/flow-network.js';
export { BROWSER_WIRE_OVERHEAD, type WireOverhead } from './kit/wire-overhead.js';
export { ChannelLedger, SimChannelEnd, connectHosts, linkTransports, type LinkOptions } from './kit/sim-channel.js';
export { SimOrigin, HTTP_CHUNK_BYTES, type OriginCounters, type OriginOptions, type Rendition, type StreamSpec } from './kit/sim-origin.js';
export { PlayerModel, DEFAULT_PLAYER_PARAMS, type PlayerParams, type PlayerSetup, type StallRecord, type ViewerRecord } from './kit/player-model.js';
