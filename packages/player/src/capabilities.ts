// What this browser can do, and the playback plan that follows from it. The decision is a pure
// function so every fallback is tested without a browser.
import type { P2pState, Playback } from './types.js';

export interface BrowserCapabilities {
  /** Media Source Extensions (or Safari's ManagedMediaSource): hls.js can play. */
  mse: boolean;
  /** RTCPeerConnection with data channels: P2P can run. */
  webrtc: boolean;
  /** The video element plays HLS itself (Safari, iOS). */
  nativeHls: boolean;
}

export interface PlaybackPlan {
  playback: Playback;
  p2p: P2pState;
  /** Why P2P is not on, in words for the stats panel; empty when it is. */
  p2pNote: string;
}

export function detectCapabilities(scope: typeof globalThis = globalThis): BrowserCapabilities {
  const global = scope as unknown as Record<string, unknown>;
  const mediaSource = (global.ManagedMediaSource ?? global.MediaSource) as { isTypeSupported?: (type: string) => boolean } | undefined;
  const mse = typeof mediaSource?.isTypeSupported === 'function' && mediaSource.isTypeSupported('video/mp4; codecs="avc1.42E01E,mp4a.40.2"');
  const peerConnection = global.RTCPeerConnection as { prototype?: { createDataChannel?: unknown } } | undefined;
  const webrtc = typeof peerConnection?.prototype?.createDataChannel === 'function';
  let nativeHls = false;
  const doc = global.document as Document | undefined;
  if (doc) nativeHls = doc.createElement('video').canPlayType('application/vnd.apple.mpegurl') !== '';
  return { mse, webrtc, nativeHls };
}

export function planPlayback(capabilities: BrowserCapabilities, p2pRequested: boolean, trackerCount: number): PlaybackPlan {
  // Where MSE exists hls.js plays, even on Safari: only hls.js can carry Shoal's loaders.
  const playback: Playback = capabilities.mse ? 'hls.js' : capabilities.nativeHls ? 'native' : 'none';
  if (!p2pRequested) return { playback, p2p: 'off', p2pNote: 'P2P is turned off for this player.' };
  if (playback === 'native') return { playback, p2p: 'unavailable', p2pNote: 'P2P off: no Media Source Extensions here, so the browser plays HLS natively.' };
  if (playback === 'none') return { playback, p2p: 'unavailable', p2pNote: 'P2P off: this browser cannot play HLS.' };
  if (!capabilities.webrtc) return { playback, p2p: 'unavailable', p2pNote: 'P2P off: this browser has no WebRTC data channels; playing over HTTP only.' };
  if (trackerCount === 0) return { playback, p2p: 'off', p2pNote: 'P2P off: no tracker configured.' };
  return { playback, p2p: 'on', p2pNote: '' };
}
