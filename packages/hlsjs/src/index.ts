// @shoal/hlsjs: Shoal for hls.js.
//
//   import Hls from 'hls.js';
//   import { attachShoal } from '@shoal/hlsjs';
//   const hls = new Hls();
//   const shoal = attachShoal(hls, { trackers: ['wss://tracker.example/announce'] });
//   hls.loadSource(url); hls.attachMedia(video);
export { attachShoal, ShoalHls, type ShoalHlsOptions } from './attach-shoal.js';
export { loadingTiming, type LoadingTiming, type TimingInputs } from './loader-stats.js';
export { playbackState, bufferedUntil, type PlaybackInputs } from './playback-state.js';
export { segmentRef, segmentRefs } from './playlist-segments.js';
export { levelStreamKeys, renditionOf, type LevelLike } from './stream-keys.js';
export { createWebRtcSignaling, PUBLIC_STUN_SERVERS, type WebRtcSignalingOptionsInput } from '@shoal/core/webrtc';
export {
  isShoalError,
  ShoalError,
  enableLogging,
  infoHash,
  infoHashHex,
  streamKey,
  swarmIdFromUrl,
  type EngineEventMap,
  type EngineStats,
  type SegmentSource,
} from '@shoal/core';
