import { describe, expect, it } from 'vitest';
import { iceServersProblem, PUBLIC_STUN_SERVERS, resolveSignalingOptions, type WebSocketConstructor } from '../src/webrtc/signaling-options.js';
import { FakeRTCPeerConnection } from './webrtc-fake-rtc.js';

const environment = {
  trackers: ['wss://t.example/announce'],
  WebSocket: class {} as unknown as WebSocketConstructor,
  RTCPeerConnection: FakeRTCPeerConnection as unknown as typeof RTCPeerConnection,
};

describe('ICE servers of the browser signaling', () => {
  it('defaults to public STUN servers, so viewers behind home NATs can connect', () => {
    expect(resolveSignalingOptions(environment).iceServers).toEqual(PUBLIC_STUN_SERVERS);
    expect(PUBLIC_STUN_SERVERS.flatMap((server) => server.urls)).toEqual(['stun:stun.l.google.com:19302', 'stun:global.stun.twilio.com:3478']);
  });

  it('takes [] to turn STUN off, and TURN servers with credentials', () => {
    expect(resolveSignalingOptions({ ...environment, iceServers: [] }).iceServers).toEqual([]);
    const turn = [{ urls: ['turn:turn.example:3478?transport=udp', 'turns:turn.example:5349'], username: 'viewer', credential: 'secret' }];
    expect(resolveSignalingOptions({ ...environment, iceServers: turn }).iceServers).toEqual(turn);
  });

  it('rejects what RTCPeerConnection would reject only at the first connection, naming the entry', () => {
    const problem = (value: unknown) => iceServersProblem(value);
    expect(problem('stun:stun.example')).toMatch(/expected an array/);
    expect(problem([{ url: 'stun:stun.example' }])).toMatch(/^\[0\]\.urls must be/);
    expect(problem([{ urls: 'stun:a.example' }, { urls: 'https://b.example' }])).toMatch(/^\[1\]\.urls: "https:\/\/b\.example" is not a stun:/);
    expect(problem([{ urls: 'turn:turn.example:3478' }])).toMatch(/^\[0\]: the TURN server turn:turn\.example:3478 needs `username` and `credential`/);
    expect(problem([{ urls: 'stun:a.example', username: 7 }])).toMatch(/^\[0\]\.username must be a string/);
    expect(() => resolveSignalingOptions({ ...environment, iceServers: [{ urls: [] }] as unknown as RTCIceServer[] })).toThrow(
      /INVALID_OPTION: signaling options\.iceServers: \[0\]\.urls must be/,
    );
  });
});
