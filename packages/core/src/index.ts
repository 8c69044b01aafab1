// @shoal/core: the platform-independent P2P engine. Runs in browsers and in Node; the WebRTC and
// tracker-client adapter is a separate entry (`@shoal/core/webrtc`).
export { ShoalEngine } from './engine.js';
export type { EngineDeps, StreamRegistration } from './engine.js';
export type { EngineEventMap, EngineEventName, EngineListener, EngineStats, OriginKind, P2pState, StreamStats } from './engine-events.js';
export type { UplinkState, UplinkUsage } from './upload/uplink-usage.js';
export type { UploadGovernorStats } from './upload/upload-governor.js';
export type { LoadResult, LoadTiming, SegmentLoad } from './transfers/pending-loads.js';
export type { P2pStatus } from './p2p-status.js';
export { DEFAULT_OPTIONS, resolveOptions } from './options.js';
export type { EngineOptions, EngineOptionsInput, SegmentValidator } from './options.js';
export { ShoalError, isShoalError } from './errors.js';
export type { ShoalErrorCode } from './errors.js';
export { createLogger, enableLogging } from './logger.js';
export type { LogSink, Logger } from './logger.js';
export { infoHash, infoHashHex, sha1, streamKey, swarmIdFromUrl } from './identity.js';
export type { RenditionAttributes } from './identity.js';
export { MemorySegmentStore } from './store/segment-store.js';
export { FetchHttpClient } from './platform/fetch-http-client.js';
export { realClock } from './platform/real-clock.js';
export type { FetchHttpClientOptions } from './platform/fetch-http-client.js';
export { PROTOCOL_VERSION } from './wire/peer-protocol.js';
/** Protocol and transfer facts a simulator of the engine must agree with (PROTOCOL.md; the HTTP budgets' initial window). */
export { CHUNK_BYTES, DATA_HEADER_BYTES, MessageType } from './wire/peer-protocol.js';
export { TCP_INITIAL_WINDOW_BYTES } from './plan/scheduler.js';
export { electOriginFetchers } from './plan/live-edge-seeding.js';
export { resolveLatencyMode } from './plan/scheduler.js';
export type { EffectiveLatencyMode } from './plan/scheduler.js';
export type {
  ByteRange,
  Clock,
  HttpClient,
  HttpRequest,
  HttpTransfer,
  LatencyMode,
  PeerTransport,
  PeerTransportEvents,
  PlaybackReport,
  SegmentRef,
  SegmentSource,
  SegmentStore,
  Signaling,
  SignalingEvents,
  SwarmSignal,
  TimerId,
} from './types.js';
