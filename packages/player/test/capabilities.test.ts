import { describe, expect, it } from 'vitest';
import { detectCapabilities, planPlayback } from '../src/capabilities.js';

const full = { mse: true, webrtc: true, nativeHls: false };

describe('planPlayback', () => {
  it('plays through hls.js with P2P where MSE and WebRTC exist and a tracker is configured', () => {
    expect(planPlayback(full, true, 1)).toEqual({ playback: 'hls.js', p2p: 'on', p2pNote: '' });
  });
  it('prefers hls.js over native HLS on Safari with MSE, since only hls.js carries Shoal', () => {
    expect(planPlayback({ ...full, nativeHls: true }, true, 1).playback).toBe('hls.js');
  });
  it('plays native HLS without P2P where MSE is missing (iOS Safari), and says why', () => {
    const plan = planPlayback({ mse: false, webrtc: true, nativeHls: true }, true, 1);
    expect(plan).toMatchObject({ playback: 'native', p2p: 'unavailable' });
    expect(plan.p2pNote).toMatch(/natively/);
  });
  it('plays hls.js alone where WebRTC is missing, and says why', () => {
    const plan = planPlayback({ ...full, webrtc: false }, true, 1);
    expect(plan).toMatchObject({ playback: 'hls.js', p2p: 'unavailable' });
    expect(plan.p2pNote).toMatch(/WebRTC/);
  });
  it('turns P2P off without a tracker, and when asked to', () => {
    expect(planPlayback(full, true, 0)).toMatchObject({ p2p: 'off', p2pNote: 'P2P off: no tracker configured.' });
    expect(planPlayback(full, false, 2)).toMatchObject({ playback: 'hls.js', p2p: 'off' });
  });
  it('reports a browser that can play no HLS at all', () => {
    expect(planPlayback({ mse: false, webrtc: false, nativeHls: false }, true, 1).playback).toBe('none');
  });
});

describe('detectCapabilities', () => {
  const h264 = 'video/mp4; codecs="avc1.42E01E,mp4a.40.2"';
  const mediaSourceClass = (supported: boolean) => ({ isTypeSupported: (type: string) => supported && type === h264 });
  const scope = (globals: Record<string, unknown>) => globals as unknown as typeof globalThis;

  it('finds Media Source Extensions in ManagedMediaSource alone, as iPhone Safari 17.1+ has them', () => {
    expect(detectCapabilities(scope({ ManagedMediaSource: mediaSourceClass(true) }))).toEqual({ mse: true, webrtc: false, nativeHls: false });
    expect(planPlayback(detectCapabilities(scope({ ManagedMediaSource: mediaSourceClass(true) })), true, 1)).toMatchObject({ playback: 'hls.js', p2p: 'unavailable' });
  });

  it('finds WebRTC only where RTCPeerConnection has data channels, and no MSE where H.264 is not supported', () => {
    const RTCPeerConnection = class {
      createDataChannel() {}
    };
    expect(detectCapabilities(scope({ MediaSource: mediaSourceClass(false), RTCPeerConnection }))).toEqual({ mse: false, webrtc: true, nativeHls: false });
  });
});
