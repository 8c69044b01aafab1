// A hostile swarm member, for the swarm runner's hostile-peers fault only (never in the product or
// its examples). It meets the honest viewers through the tracker exactly as they do, speaks the
// peer wire protocol (packages/core/PROTOCOL.md) written out here on purpose, and misbehaves in one
// way, named by the `behaviour` query parameter:
//   silent       announces every segment, accepts requests, then never sends a byte
//   trickle      answers requests with a few bytes per second
//   flood        floods requests (200 a second), then sends an oversized and a malformed message
//   liar         announces every segment and answers every request `absent`, re-announcing it
//   wrong-bytes  answers requests with another segment's valid bytes
// Every hostile peer advertises a fast, idle uplink, the most attractive peer in the swarm, and
// announces exactly the segments of the current playlist window, as an honest viewer could.
// The runner reads `window.hostilePeer.snapshot()`: what it did and what the honest peers did to it.
// Query: src (master playlist), trackers, iceServers (JSON), behaviour.
import { createWebRtcSignaling, infoHash, levelStreamKeys, swarmIdFromUrl } from '/lib/shoal-hlsjs/shoal-hlsjs.browser.js';

const params = new URLSearchParams(location.search);
const behaviour = params.get('behaviour') ?? 'silent';
const behaviours = ['silent', 'trickle', 'flood', 'liar', 'wrong-bytes'];
if (!behaviours.includes(behaviour)) throw new Error(`unknown behaviour "${behaviour}"; one of: ${behaviours.join(', ')}`);

const TYPE = { handshake: 1, availability: 2, have: 3, request: 4, data: 5, done: 6, absent: 7, busy: 8, cancel: 9, ping: 10, pong: 11 };
/** The protocol version it speaks: honest peers close the channel to any other without a word (faults.spec.ts checks it was asked). */
const VERSION = 4;
const TO_SEGMENT_END = 0xffff_ffff;
const ADVERTISED_PACE = 10_000_000; // bytes/s: "I am fast and idle"
/** The playlist's current window (media sequence numbers), refreshed every 2 s. */
const window_ = { first: 0, last: -1 };
const announcers = new Set();

/** Per honest peer (its id): when it connected and closed, what it asked of us and sent us. */
const peers = new Map();
const state = { behaviour, peerId: null, startedAtMs: Date.now(), joinedSwarms: 0, error: null, sentMessages: 0, sentBytes: 0 };

const u32 = (view, at, value) => view.setUint32(at, value >>> 0);
function message(type, length) {
  const bytes = new Uint8Array(length);
  bytes[0] = type;
  return { bytes, view: new DataView(bytes.buffer) };
}
function handshake() {
  const { bytes } = message(TYPE.handshake, 5);
  bytes.set([0x53, 0x48, VERSION, 1], 1);
  return bytes;
}
function availabilityOfWindow() {
  const count = Math.max(0, window_.last - window_.first + 1);
  const mapBytes = Math.ceil(count / 8);
  const { bytes, view } = message(TYPE.availability, 7 + 2 * mapBytes);
  u32(view, 1, window_.first);
  view.setUint16(5, count);
  for (let i = 0; i < count; i += 1) bytes[7 + (i >> 3)] |= 0x80 >> (i & 7); // has; fetching: none
  return bytes;
}

/** Reads the first rendition's media playlist: its media sequence and segment count. */
async function refreshWindow(levelUrl) {
  const text = await fetch(levelUrl, { cache: 'no-store' }).then((response) => response.text());
  const first = Number(/#EXT-X-MEDIA-SEQUENCE:(\d+)/.exec(text)?.[1] ?? 0);
  const last = first + (text.match(/#EXTINF/g) ?? []).length - 1;
  const previous = window_.last;
  Object.assign(window_, { first, last });
  for (let sequence = Math.max(previous + 1, first); sequence <= last && previous >= 0; sequence += 1) for (const announce of announcers) announce(sequence);
}
function have(sequence, segmentState) {
  const { bytes, view } = message(TYPE.have, 6);
  u32(view, 1, sequence);
  bytes[5] = segmentState;
  return bytes;
}
/** The whole segment, needed within 5 s. */
function request(sequence) {
  const { bytes, view } = message(TYPE.request, 17);
  u32(view, 1, sequence);
  u32(view, 5, 0);
  u32(view, 9, TO_SEGMENT_END);
  u32(view, 13, 5000);
  return bytes;
}
function data(sequence, offset, totalBytes, payload) {
  const { bytes, view } = message(TYPE.data, 13 + payload.length);
  u32(view, 1, sequence);
  u32(view, 5, offset);
  u32(view, 9, totalBytes);
  bytes.set(payload, 13);
  return bytes;
}
function done(sequence, totalBytes) {
  const { bytes, view } = message(TYPE.done, 9);
  u32(view, 1, sequence);
  u32(view, 5, totalBytes);
  return bytes;
}
function short(type, sequence) {
  const { bytes, view } = message(type, 5);
  u32(view, 1, sequence);
  return bytes;
}
/** Answers a ping: idle at a fast pace, and (a lie nobody can check) nothing received from the pinger. */
function pong(echoMs) {
  const { view, bytes } = message(TYPE.pong, 21);
  u32(view, 1, echoMs);
  u32(view, 5, Date.now() % 2 ** 32);
  u32(view, 9, ADVERTISED_PACE);
  u32(view, 13, 0);
  u32(view, 17, 0);
  return bytes;
}
function ping() {
  const { view, bytes } = message(TYPE.ping, 13);
  u32(view, 1, Date.now() % 2 ** 32);
  u32(view, 5, ADVERTISED_PACE);
  u32(view, 9, 0);
  return bytes;
}

// Real segment bytes, not of the segment asked for (served by the runner's page server, not the origin).
let otherSegment = null;
async function loadOtherSegment() {
  const response = await fetch('/media/180p/180p-000.ts');
  if (!response.ok) throw new Error(`/media/180p/180p-000.ts: HTTP ${response.status}`);
  otherSegment = new Uint8Array(await response.arrayBuffer());
}

// Hostile peers' ids start with "HOSTILE-" (hex): they leave each other alone, so that what they
// count is what honest viewers did to them.
const HOSTILE_PREFIX = [...'HOSTILE-'].map((char) => char.charCodeAt(0).toString(16)).join('');
const hostilePeerId = () => HOSTILE_PREFIX + [...crypto.getRandomValues(new Uint8Array(12))].map((byte) => byte.toString(16).padStart(2, '0')).join('');

function onPeer(transport) {
  const id = transport.remotePeerId;
  if (id.startsWith(HOSTILE_PREFIX)) return transport.close();
  const record = peers.get(id) ?? { id, connectedAtMs: Date.now(), closedAtMs: null, closeReason: null, requests: 0, firstRequestAtMs: null, lastRequestAtMs: null, dataBytesReceived: 0, connections: 0 };
  record.connections += 1;
  record.closedAtMs = null;
  peers.set(id, record);
  const timers = new Set();
  const every = (ms, fn) => timers.add(setInterval(fn, ms));
  const later = (ms, fn) => timers.add(setTimeout(fn, ms));
  let closed = false;
  const send = (bytes) => {
    if (closed) return;
    try {
      transport.send(bytes);
      state.sentMessages += 1;
      state.sentBytes += bytes.length;
    } catch {
      // The honest peer closed the channel: that is what the runner wants to see.
    }
  };
  const trickles = new Map();
  transport.setEvents({
    message(bytes) {
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      const type = bytes[0];
      if (type === TYPE.ping) return send(pong(view.getUint32(1)));
      if (type === TYPE.data) record.dataBytesReceived += bytes.length - 13;
      if (type === TYPE.cancel) {
        clearInterval(trickles.get(view.getUint32(1)));
        trickles.delete(view.getUint32(1));
      }
      if (type !== TYPE.request) return;
      // request: sequence, start, end (TO_SEGMENT_END: the segment's end), within ms.
      const sequence = view.getUint32(1);
      const offset = view.getUint32(5);
      const askedEnd = view.getUint32(9);
      record.requests += 1;
      record.firstRequestAtMs ??= Date.now();
      record.lastRequestAtMs = Date.now();
      if (behaviour === 'liar') {
        send(short(TYPE.absent, sequence));
        later(200, () => send(have(sequence, 1)));
      } else if (behaviour === 'wrong-bytes' && otherSegment) {
        const total = otherSegment.length;
        const end = askedEnd === TO_SEGMENT_END ? total : Math.min(askedEnd, total);
        for (let at = offset; at < end; at += 16384) send(data(sequence, at, total, otherSegment.subarray(at, Math.min(end, at + 16384))));
        send(done(sequence, total));
      } else if (behaviour === 'trickle') {
        const total = otherSegment?.length ?? 200_000;
        const end = askedEnd === TO_SEGMENT_END ? total : Math.min(askedEnd, total);
        let at = offset;
        const timer = setInterval(() => {
          if (at >= end) return clearInterval(timer);
          send(data(sequence, at, total, (otherSegment ?? new Uint8Array(total)).subarray(at, Math.min(at + 4, end))));
          at += 4;
        }, 1000);
        timers.add(timer);
        trickles.set(sequence, timer);
      }
      // silent and flood: accepted, never answered.
    },
    close(reason) {
      closed = true;
      for (const timer of timers) {
        if (typeof timer === 'object' && timer && 'clear' in timer) timer.clear();
        else {
          clearInterval(timer);
          clearTimeout(timer);
        }
      }
      record.closedAtMs = Date.now();
      record.closeReason = reason ?? null;
    },
    drain() {},
  });
  send(handshake());
  send(availabilityOfWindow());
  const announce = (sequence) => send(have(sequence, 1));
  announcers.add(announce);
  timers.add({ clear: () => announcers.delete(announce) });
  send(ping());
  every(1000, () => send(ping()));
  if (behaviour === 'flood') {
    // 200 requests a second over the playlist window, for 20 s; then the oversized message, then
    // one of a wrong length.
    let next = 0;
    every(100, () => {
      const count = Math.max(1, window_.last - window_.first + 1);
      for (let k = 0; k < 20; k += 1) send(request(window_.first + (next++ % count)));
    });
    later(20_000, () => {
      const oversized = new Uint8Array(64 * 1024);
      oversized[0] = TYPE.data;
      send(oversized);
      send(new Uint8Array([TYPE.have, 0, 0]));
    });
  }
}

async function start() {
  if (behaviour === 'wrong-bytes' || behaviour === 'trickle') await loadOtherSegment();
  const src = params.get('src');
  const trackers = (params.get('trackers') ?? '').split(',').filter(Boolean);
  const iceServers = JSON.parse(params.get('iceServers') ?? '[]');
  // The renditions' stream keys, as the honest viewers derive them (hls.js parses the master playlist).
  const levels = await new Promise((resolve, reject) => {
    const hls = new globalThis.Hls();
    hls.on(globalThis.Hls.Events.MANIFEST_PARSED, (_event, { levels }) => resolve(levels));
    hls.on(globalThis.Hls.Events.ERROR, (_event, error) => error.fatal && reject(new Error(error.details)));
    hls.loadSource(src);
  });
  const levelUrl = new URL(levels[0].url, src).href;
  await refreshWindow(levelUrl);
  setInterval(() => refreshWindow(levelUrl).catch(() => {}), 2_000);
  state.peerId = hostilePeerId();
  const signaling = createWebRtcSignaling({ trackers, iceServers, peerId: state.peerId });
  const swarms = levelStreamKeys(swarmIdFromUrl(src), levels).map((key) => signaling.join(infoHash(key), { peer: onPeer, error() {}, warning() {} }));
  state.joinedSwarms = swarms.length;
  // Ask for more honest peers now and then, like a viewer below its target.
  setInterval(() => swarms.forEach((swarm) => swarm.requestPeers()), 5_000);
}

window.hostilePeer = {
  snapshot() {
    return { ...state, atMs: Date.now(), peers: [...peers.values()].map((peer) => ({ ...peer })) };
  },
};

start().catch((error) => {
  state.error = String(error?.message ?? error);
});
