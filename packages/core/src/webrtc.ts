// @shoal/core/webrtc: the browser's Signaling (WebTorrent tracker client + WebRTC data channels).
// Kept out of the main entry so that @shoal/core imports and runs in Node without any WebRTC.
export { createWebRtcSignaling } from './webrtc/webrtc-signaling.js';
export { offersToMake } from './webrtc/swarm-signal.js';
export {
  DEFAULT_SIGNALING_OPTIONS,
  iceServersProblem,
  PUBLIC_STUN_SERVERS,
  type RTCPeerConnectionConstructor,
  type WebRtcSignalingOptions,
  type WebRtcSignalingOptionsInput,
  type WebSocketConstructor,
  type WebSocketLike,
} from './webrtc/signaling-options.js';
