// Every option of the browser signaling (tracker client + WebRTC), its default and its
// validation live here and nowhere else.
import { ShoalError } from '../errors.js';
import { invalidOption, overDefaults } from '../options.js';
import { realClock } from '../platform/real-clock.js';
import type { Clock } from '../types.js';

/** The subset of the WebSocket API the tracker client uses (browsers' WebSocket, or `ws` in Node). */
export interface WebSocketLike {
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: { code?: number; reason?: string }) => void) | null;
  onerror: ((event: unknown) => void) | null;
  send(data: string): void;
  close(): void;
}
export type WebSocketConstructor = new (url: string) => WebSocketLike;
export type RTCPeerConnectionConstructor = new (configuration: RTCConfiguration) => RTCPeerConnection;

/**
 * The default ICE servers: public STUN servers, so that viewers behind home NATs find their public
 * address and reach each other. The STUN operators (Google, Twilio) see each viewer's IP address,
 * not what it watches. Pass `iceServers: []` where every peer is on one machine or a LAN, or your
 * own STUN/TURN servers; peers behind symmetric NATs need a TURN server of your own.
 */
export const PUBLIC_STUN_SERVERS: readonly RTCIceServer[] = Object.freeze([
  { urls: ['stun:stun.l.google.com:19302', 'stun:global.stun.twilio.com:3478'] },
]);

/**
 * Why `value` is not a usable RTCIceServer list, in words (undefined when it is): each entry needs
 * `urls` (stun:, turn: or turns: URLs), and a TURN entry needs `username` and `credential`, which
 * RTCPeerConnection would otherwise reject only when the first peer connects.
 */
export function iceServersProblem(value: unknown): string | undefined {
  if (!Array.isArray(value)) return 'expected an array of ICE servers ({ urls, username?, credential? })';
  for (const [index, server] of value.entries()) {
    const entry = `[${index}]`;
    if (typeof server !== 'object' || server === null || Array.isArray(server)) return `${entry} is not an object with \`urls\``;
    const { urls, username, credential } = server as Record<string, unknown>;
    const list = typeof urls === 'string' ? [urls] : urls;
    if (!Array.isArray(list) || list.length === 0) return `${entry}.urls must be a stun:, turn: or turns: URL or a non-empty array of them`;
    for (const url of list) {
      if (typeof url !== 'string' || !/^(stun|turn|turns):[^\s]+$/i.test(url)) return `${entry}.urls: ${JSON.stringify(url)} is not a stun:, turn: or turns: URL`;
      if (/^turns?:/i.test(url) && (typeof username !== 'string' || typeof credential !== 'string')) {
        return `${entry}: the TURN server ${url} needs \`username\` and \`credential\` strings`;
      }
    }
    if (username !== undefined && typeof username !== 'string') return `${entry}.username must be a string`;
    if (credential !== undefined && typeof credential !== 'string') return `${entry}.credential must be a string`;
  }
  return undefined;
}

export interface WebRtcSignalingOptions {
  /** WebTorrent tracker URLs (`wss://tracker.example/announce`). Every swarm is announced to each of them. */
  trackers: string[];
  /** ICE servers for every RTCPeerConnection. Default: PUBLIC_STUN_SERVERS; `[]` for loopback and LAN only. */
  iceServers: RTCIceServer[];
  /** This peer's id, 40 hex characters. Default: random, starting with the ASCII client tag `-SH0001-`. */
  peerId: string | undefined;
  /** Connections (open or being set up) per swarm at most; offers from peers beyond it are ignored. */
  maxPeers: number;
  /** WebRTC offers sent with one announce to one tracker (each is one RTCPeerConnection until answered). */
  offersPerAnnounce: number;
  /** Announce period until a tracker states its own `interval`. */
  announceIntervalMs: number;
  /**
   * requestPeers() announces again at most this long after the previous announce; the gap doubles
   * (up to the announce interval) while no new peer connects, so a lonely peer stays cheap.
   */
  requestPeersIntervalMs: number;
  /** An offer nobody answered is closed after this long. */
  offerTimeoutMs: number;
  /** A connection whose data channel has not opened this long after the answer is closed. */
  connectTimeoutMs: number;
  /** The offer or answer is sent with the candidates gathered by then (no trickle ICE over a tracker). */
  iceGatheringTimeoutMs: number;
  /** First reconnect delay after a tracker connection fails; doubles per failure... */
  reconnectMinMs: number;
  /** ...up to this. Each delay is drawn from [delay/2, delay] so peers don't return in a herd. */
  reconnectMaxMs: number;
  /** The data channel's `drain` event fires when its bufferedAmount falls to this many bytes. */
  bufferedAmountLowThreshold: number;
  /** Timers; real by default. */
  clock: Clock;
  /** Default: `globalThis.WebSocket`. Node tests pass the `ws` package's. */
  WebSocket: WebSocketConstructor | undefined;
  /** Default: `globalThis.RTCPeerConnection`. Tests pass a fake. */
  RTCPeerConnection: RTCPeerConnectionConstructor | undefined;
}

export type WebRtcSignalingOptionsInput = Partial<WebRtcSignalingOptions> & Pick<WebRtcSignalingOptions, 'trackers'>;

export interface ResolvedSignalingOptions extends WebRtcSignalingOptions {
  WebSocket: WebSocketConstructor;
  RTCPeerConnection: RTCPeerConnectionConstructor;
}


export const DEFAULT_SIGNALING_OPTIONS: Readonly<Omit<WebRtcSignalingOptions, 'trackers'>> = Object.freeze({
  iceServers: PUBLIC_STUN_SERVERS as RTCIceServer[],
  peerId: undefined,
  maxPeers: 12,
  offersPerAnnounce: 5,
  announceIntervalMs: 120_000,
  requestPeersIntervalMs: 5_000,
  offerTimeoutMs: 15_000,
  connectTimeoutMs: 15_000,
  iceGatheringTimeoutMs: 5_000,
  reconnectMinMs: 1_000,
  // After an outage of any length a peer is back within 10 s of the tracker's return (the swarm
  // re-meets well within 20 s); the jitter spreads a whole swarm's returns over 5 s.
  reconnectMaxMs: 10_000,
  bufferedAmountLowThreshold: 64 * 1024,
  clock: realClock,
  WebSocket: undefined,
  RTCPeerConnection: undefined,
});

function invalid(field: string, expected: string, value: unknown): never {
  return invalidOption('signaling options', field, expected, value);
}

/**
 * Merges the input over the defaults and validates every field; throws INVALID_OPTION naming the
 * field, or WEBRTC_UNAVAILABLE when the environment has no WebSocket or RTCPeerConnection.
 */
export function resolveSignalingOptions(input: WebRtcSignalingOptionsInput): ResolvedSignalingOptions {
  const options = overDefaults<WebRtcSignalingOptions>('signaling options', DEFAULT_SIGNALING_OPTIONS, input);
  const { trackers } = options;
  if (!Array.isArray(trackers) || trackers.length === 0) invalid('trackers', 'a non-empty array of ws:// or wss:// URLs', trackers);
  for (const url of trackers) {
    if (typeof url !== 'string' || !/^wss?:\/\/[^/\s]/i.test(url)) invalid('trackers', 'ws:// or wss:// URLs', url);
  }
  const iceProblem = iceServersProblem(options.iceServers);
  if (iceProblem !== undefined) throw new ShoalError('INVALID_OPTION', `signaling options.iceServers: ${iceProblem}`);
  if (options.peerId !== undefined && !/^[0-9a-f]{40}$/.test(options.peerId)) invalid('peerId', '40 lowercase hex characters', options.peerId);
  const numbers: [keyof WebRtcSignalingOptions, number][] = [
    ['maxPeers', 1], ['offersPerAnnounce', 0], ['announceIntervalMs', 1000], ['requestPeersIntervalMs', 0],
    ['offerTimeoutMs', 1], ['connectTimeoutMs', 1], ['iceGatheringTimeoutMs', 0], ['reconnectMinMs', 1],
    ['reconnectMaxMs', 1], ['bufferedAmountLowThreshold', 0],
  ];
  for (const [field, min] of numbers) {
    const value = options[field];
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min) invalid(field, `an integer >= ${min}`, value);
  }
  return { ...options, WebSocket: environmentClass('WebSocket', options.WebSocket), RTCPeerConnection: environmentClass('RTCPeerConnection', options.RTCPeerConnection) };
}

/**
 * The class given, or the environment's own. A value given that is not a class is the
 * integrator's error (INVALID_OPTION); a class the environment lacks (WebKitGTK and other builds
 * without WebRTC, WebRTC switched off by policy or privacy settings) is the environment's:
 * WEBRTC_UNAVAILABLE, on which integrations play over HTTP alone.
 */
function environmentClass<Name extends 'WebSocket' | 'RTCPeerConnection'>(name: Name, given: WebRtcSignalingOptions[Name]): ResolvedSignalingOptions[Name] {
  if (given !== undefined) {
    if (typeof given !== 'function') invalid(name, `a class like the browser's ${name}`, given);
    return given as ResolvedSignalingOptions[Name];
  }
  const found = (globalThis as Record<string, unknown>)[name];
  if (typeof found !== 'function') throw new ShoalError('WEBRTC_UNAVAILABLE', `this environment has no ${name} (${typeof found})`);
  if (name === 'RTCPeerConnection' && typeof (found as { prototype?: { createDataChannel?: unknown } }).prototype?.createDataChannel !== 'function') {
    throw new ShoalError('WEBRTC_UNAVAILABLE', 'this environment\'s RTCPeerConnection has no data channels');
  }
  return found as ResolvedSignalingOptions[Name];
}
