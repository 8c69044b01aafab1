import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import Server from 'bittorrent-tracker/server';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { isShoalError } from '../src/errors.js';
import { infoHash, streamKey } from '../src/identity.js';
import type { Clock, PeerTransport, Signaling, SignalingEvents } from '../src/types.js';
import { createWebRtcSignaling, type WebRtcSignalingOptionsInput, type WebSocketConstructor } from '../src/webrtc.js';
import { FakeRTCPeerConnection } from './webrtc-fake-rtc.js';

const INFO_HASH = infoHash(streamKey('https://origin.test/live.m3u8', { bandwidth: 800_000 }));
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  FakeRTCPeerConnection.failIce = false;
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function waitFor<T>(probe: () => T | undefined | false, what: string, timeoutMs = 5000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** The reference tracker (bittorrent-tracker's server), on loopback. */
async function referenceTracker(): Promise<string> {
  const server = new Server({ udp: false, http: false, ws: true, stats: false });
  server.on('warning', () => {});
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  return `ws://127.0.0.1:${(server.ws.address() as AddressInfo).port}`;
}

/** A tracker whose replies the test scripts, recording every message it receives. */
async function scriptedTracker(port = 0) {
  const server = new WebSocketServer({ host: '127.0.0.1', port });
  await once(server, 'listening');
  const received: Record<string, any>[] = [];
  const sockets: WebSocket[] = [];
  let reply: (message: Record<string, any>, socket: WebSocket) => void = () => {};
  server.on('connection', (socket) => {
    sockets.push(socket);
    socket.on('message', (data) => {
      const message = JSON.parse(String(data));
      received.push(message);
      reply(message, socket);
    });
  });
  const close = () => {
    for (const socket of sockets) socket.terminate();
    return new Promise((resolve) => server.close(resolve));
  };
  cleanups.push(close);
  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    sockets,
    close,
    onMessage(handler: typeof reply) {
      reply = handler;
    },
    broadcast(message: object) {
      for (const socket of sockets) socket.send(JSON.stringify(message));
    },
  };
}

type Announce = Record<string, any>;

/**
 * A tracker that relays answers, and sends each announce's first offer only where `route` says:
 * given every announce with offers so far (the latest last), the [from, to] pairs to relay now.
 */
async function offerRoutingTracker(route: (announces: Announce[]) => [Announce, Announce][]) {
  const tracker = await scriptedTracker();
  const byPeer = new Map<string, WebSocket>();
  const announces: Announce[] = [];
  tracker.onMessage((message, socket) => {
    byPeer.set(message.peer_id, socket);
    if (message.answer) {
      byPeer.get(message.to_peer_id)!.send(JSON.stringify({ ...message, to_peer_id: undefined }));
      return;
    }
    if (!message.offers?.length) return;
    announces.push(message);
    for (const [from, to] of route(announces)) {
      const { offer_id: offerId, offer } = from.offers[0];
      byPeer.get(to.peer_id)!.send(JSON.stringify({ action: 'announce', info_hash: INFO_HASH, peer_id: from.peer_id, offer_id: offerId, offer }));
    }
  });
  return { url: tracker.url, announces };
}

/** Real timers, counted, so a test can see that destroy() leaves none behind. */
function countingClock(): Clock & { pending: Set<unknown> } {
  const pending = new Set<unknown>();
  return {
    pending,
    now: () => Date.now(),
    setTimeout(callback, delayMs) {
      const timer = setTimeout(() => {
        pending.delete(timer);
        callback();
      }, delayMs);
      pending.add(timer);
      return timer;
    },
    clearTimeout(timer) {
      pending.delete(timer);
      clearTimeout(timer as ReturnType<typeof setTimeout>);
    },
  };
}

function recorder() {
  const peers: PeerTransport[] = [];
  const errors: Error[] = [];
  const warnings: string[] = [];
  const events: SignalingEvents = {
    peer: (transport) => peers.push(transport),
    error: (error) => errors.push(error),
    warning: (message) => warnings.push(message),
  };
  return { peers, errors, warnings, events };
}

function signaling(trackers: string[], options: Partial<WebRtcSignalingOptionsInput> = {}): Signaling {
  const created = createWebRtcSignaling({
    trackers,
    WebSocket: WebSocket as unknown as WebSocketConstructor,
    RTCPeerConnection: FakeRTCPeerConnection as unknown as typeof RTCPeerConnection,
    reconnectMinMs: 50,
    reconnectMaxMs: 400,
    ...options,
  });
  cleanups.push(() => created.destroy());
  return created;
}

describe('webrtc signaling against the reference tracker', () => {
  it('connects two peers of a swarm over a data channel that carries binary messages both ways', async () => {
    const tracker = await referenceTracker();
    const alice = signaling([tracker]);
    const bob = signaling([tracker]);
    const atAlice = recorder();
    const atBob = recorder();
    alice.join(INFO_HASH, atAlice.events);
    await new Promise((resolve) => setTimeout(resolve, 50));
    bob.join(INFO_HASH, atBob.events);

    const [toBob] = await waitFor(() => atAlice.peers.length > 0 && atAlice.peers, 'alice connected');
    const [toAlice] = await waitFor(() => atBob.peers.length > 0 && atBob.peers, 'bob connected');
    expect(toBob!.remotePeerId).toBe(bob.localPeerId);
    expect(toAlice!.remotePeerId).toBe(alice.localPeerId);
    expect(alice.localPeerId).toMatch(/^[0-9a-f]{40}$/);
    expect(alice.localPeerId.startsWith(Buffer.from('-SH0001-').toString('hex'))).toBe(true);

    const gotByBob: Uint8Array[] = [];
    const gotByAlice: Uint8Array[] = [];
    // Alice sends before Bob installs his handlers: the message waits for him.
    toBob!.setEvents({ message: (data) => gotByAlice.push(data), close: () => {}, drain: () => {} });
    toBob!.send(new Uint8Array([1, 2, 3]));
    await new Promise((resolve) => setTimeout(resolve, 20));
    const closedAtBob: (string | undefined)[] = [];
    toAlice!.setEvents({ message: (data) => gotByBob.push(data), close: (reason) => closedAtBob.push(reason), drain: () => {} });
    toAlice!.send(new Uint8Array([9, 8]));
    await waitFor(() => gotByBob.length === 1 && gotByAlice.length === 1, 'messages');
    expect([...gotByBob[0]!]).toEqual([1, 2, 3]);
    expect([...gotByAlice[0]!]).toEqual([9, 8]);

    toBob!.close();
    await waitFor(() => closedAtBob.length === 1, 'close seen by bob');
    expect(atAlice.errors).toEqual([]);
    expect(atBob.errors).toEqual([]);
  });

  it('connects once when two trackers both relay the same pair of peers', async () => {
    const trackers = [await referenceTracker(), await referenceTracker()];
    const alice = signaling(trackers);
    const bob = signaling(trackers);
    const atAlice = recorder();
    const atBob = recorder();
    alice.join(INFO_HASH, atAlice.events);
    await new Promise((resolve) => setTimeout(resolve, 50));
    bob.join(INFO_HASH, atBob.events);
    await waitFor(() => atAlice.peers.length > 0 && atBob.peers.length > 0, 'connected');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(atAlice.peers).toHaveLength(1);
    expect(atBob.peers).toHaveLength(1);
  });

  it('keeps one connection when both peers offer to each other at once', async () => {
    // A tracker that holds the first announce until the second arrives, then crosses their offers.
    const tracker = await offerRoutingTracker((announces) =>
      announces.length === 2 ? [[announces[0]!, announces[1]!], [announces[1]!, announces[0]!]] : [],
    );
    const alice = signaling([tracker.url], { offersPerAnnounce: 1 });
    const bob = signaling([tracker.url], { offersPerAnnounce: 1 });
    const atAlice = recorder();
    const atBob = recorder();
    alice.join(INFO_HASH, atAlice.events);
    bob.join(INFO_HASH, atBob.events);
    await waitFor(() => atAlice.peers.length > 0 && atBob.peers.length > 0, 'connected');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const open = (peers: PeerTransport[]) => peers.filter((peer) => peer.remotePeerId && !(peer as { closed?: boolean }).closed);
    expect(open(atAlice.peers)).toHaveLength(1);
    expect(open(atBob.peers)).toHaveLength(1);
    const got: Uint8Array[] = [];
    open(atBob.peers)[0]!.setEvents({ message: (data) => got.push(data), close: () => {}, drain: () => {} });
    open(atAlice.peers)[0]!.send(new Uint8Array([7]));
    await waitFor(() => got.length === 1, 'message over the surviving connection');
  });

  it('keeps an open connection when the tracker relays the same two peers\' offers to each other again (a new handshake would cost a small uplink, and the open one carries transfers)', async () => {
    // A tracker that relays the first offer of one announce to the other peer, then crosses the
    // offers of their next announces, as a tracker picking random peers for each offer may do
    // between peers already connected. The first time only the larger id's offer goes through:
    // the smaller id's new offer would win the tie-break between two connections being made.
    const hex = (announce: Announce) => Buffer.from(announce.peer_id, 'latin1').toString('hex');
    const tracker = await offerRoutingTracker((announces) => {
      if (announces.length % 2 !== 0) return [];
      const [first, second] = announces.slice(-2) as [Announce, Announce];
      if (first.peer_id === second.peer_id) return [];
      const [smaller, larger] = hex(first) < hex(second) ? [first, second] : [second, first];
      return announces.length === 2 ? [[larger, smaller]] : [[first, second], [second, first]];
    });
    const { announces } = tracker;
    const alice = signaling([tracker.url], { offersPerAnnounce: 1, requestPeersIntervalMs: 50 });
    const bob = signaling([tracker.url], { offersPerAnnounce: 1, requestPeersIntervalMs: 50 });
    const atAlice = recorder();
    const atBob = recorder();
    const aliceSwarm = alice.join(INFO_HASH, atAlice.events);
    const bobSwarm = bob.join(INFO_HASH, atBob.events);
    const open = (peers: PeerTransport[]) => peers.filter((peer) => peer.remotePeerId && !(peer as { closed?: boolean }).closed);
    await waitFor(() => open(atAlice.peers).length > 0 && open(atBob.peers).length > 0, 'connected');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const [aliceSide, bobSide] = [open(atAlice.peers)[0]!, open(atBob.peers)[0]!];
    // Both ask the tracker for more peers; it crosses their new offers.
    aliceSwarm.requestPeers();
    bobSwarm.requestPeers();
    await waitFor(() => announces.length >= 4, 'second announces', 2000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(open(atAlice.peers)).toEqual([aliceSide]);
    expect(open(atBob.peers)).toEqual([bobSide]);
    const got: Uint8Array[] = [];
    bobSide.setEvents({ message: (data) => got.push(data), close: () => {}, drain: () => {} });
    aliceSide.send(new Uint8Array([7]));
    await waitFor(() => got.length === 1, 'a message over the first connection');
  });

  it('accepts the info_hash as 40 hex characters too', async () => {
    const tracker = await referenceTracker();
    const alice = signaling([tracker]);
    const bob = signaling([tracker]);
    const atBob = recorder();
    alice.join(Buffer.from(INFO_HASH, 'latin1').toString('hex'), recorder().events);
    await new Promise((resolve) => setTimeout(resolve, 50));
    bob.join(INFO_HASH, atBob.events);
    await waitFor(() => atBob.peers.length === 1, 'bob connected to alice');
  });

  it('does not connect peers of different swarms', async () => {
    const tracker = await referenceTracker();
    const atBob = recorder();
    signaling([tracker]).join(INFO_HASH, recorder().events);
    await new Promise((resolve) => setTimeout(resolve, 50));
    signaling([tracker]).join(infoHash('another rendition'), atBob.events);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(atBob.peers).toHaveLength(0);
  });
});

describe('webrtc signaling: the tracker protocol', () => {
  it('announces with started, binary 20-character ids and offers: two in the first announce (a newcomer joins before its first loads), offersPerAnnounce after', async () => {
    const tracker = await scriptedTracker();
    tracker.onMessage((message, socket) => socket.send(JSON.stringify({ action: 'announce', info_hash: message.info_hash, interval: 120, complete: 5, incomplete: 5 })));
    const client = signaling([tracker.url], { offersPerAnnounce: 3, requestPeersIntervalMs: 0 });
    const swarm = client.join(INFO_HASH, recorder().events);
    const [announce] = await waitFor(() => tracker.received.length > 0 && tracker.received, 'announce');
    expect(announce).toMatchObject({ action: 'announce', event: 'started', info_hash: INFO_HASH, numwant: 2 });
    expect(announce!.peer_id).toHaveLength(20);
    expect(Buffer.from(announce!.peer_id, 'latin1').toString('hex')).toBe(client.localPeerId);
    // A secret of 160 random bits, with which a tracker gives the peer_id back after a reconnect.
    expect(announce!.key).toMatch(/^[0-9a-f]{40}$/);
    expect(announce!.offers).toHaveLength(2);
    for (const { offer_id: offerId, offer } of announce!.offers) {
      expect(offerId).toHaveLength(20);
      expect(offer).toMatchObject({ type: 'offer', sdp: expect.any(String) });
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    swarm.requestPeers();
    const [, again] = await waitFor(() => tracker.received.length > 1 && tracker.received, 'a second announce');
    // Its two unanswered offers still hold their slots below maxPeers (12): room for three more.
    expect(again!.offers).toHaveLength(3);
    expect(again!.key).toBe(announce!.key);
  });

  it('keeps its announces apart when a tracker states an interval above 2^31 ms (setTimeout would fire at once)', async () => {
    const tracker = await scriptedTracker();
    tracker.onMessage((message, socket) => socket.send(JSON.stringify({ action: 'announce', info_hash: message.info_hash, interval: 3e6, complete: 0, incomplete: 1 })));
    const swarm = signaling([tracker.url], { requestPeersIntervalMs: 20 }).join(INFO_HASH, recorder().events);
    await waitFor(() => tracker.received.length === 1, 'first announce');
    await new Promise((resolve) => setTimeout(resolve, 30));
    swarm.requestPeers();
    await waitFor(() => tracker.received.length === 2, 'announce after requestPeers');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(tracker.received).toHaveLength(2);
  });

  it('answers a relayed offer through the tracker, to the offering peer', async () => {
    const tracker = await scriptedTracker();
    const client = signaling([tracker.url]);
    const events = recorder();
    client.join(INFO_HASH, events.events);
    await waitFor(() => tracker.received.length > 0, 'announce');
    const remote = new FakeRTCPeerConnection({});
    remote.createDataChannel('shoal', { negotiated: true, id: 0 });
    const offer = await remote.createOffer();
    await remote.setLocalDescription(offer);
    const remotePeerId = 'R'.repeat(20);
    tracker.broadcast({ action: 'announce', info_hash: INFO_HASH, peer_id: remotePeerId, offer_id: 'o'.repeat(20), offer });
    const answer = await waitFor(() => tracker.received.find((message) => message.answer), 'answer');
    expect(answer).toMatchObject({
      action: 'announce', info_hash: INFO_HASH, to_peer_id: remotePeerId, offer_id: 'o'.repeat(20), answer: { type: 'answer' },
    });
    await new Promise((resolve) => setTimeout(resolve, 5));
    await remote.setRemoteDescription(answer.answer);
    const [peer] = await waitFor(() => events.peers.length === 1 && events.peers, 'peer');
    expect(peer!.remotePeerId).toBe(Buffer.from(remotePeerId, 'latin1').toString('hex'));
  });

  it('announces again soon on requestPeers, backing off while no peer comes', async () => {
    const tracker = await scriptedTracker();
    tracker.onMessage((message, socket) =>
      socket.send(JSON.stringify({ action: 'announce', info_hash: message.info_hash, interval: 120, complete: 0, incomplete: 1 })),
    );
    const client = signaling([tracker.url], { requestPeersIntervalMs: 100 });
    const swarm = client.join(INFO_HASH, recorder().events);
    await waitFor(() => tracker.received.length === 1, 'first announce');
    const firstAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 20));
    swarm.requestPeers();
    swarm.requestPeers();
    await waitFor(() => tracker.received.length === 2, 'announce after requestPeers', 2000);
    const secondAt = Date.now();
    expect(secondAt - firstAt).toBeGreaterThanOrEqual(90);
    swarm.requestPeers();
    await waitFor(() => tracker.received.length === 3, 'third announce', 2000);
    // The gap doubled (100 ms, then 200 ms), and nothing else was sent meanwhile.
    expect(Date.now() - secondAt).toBeGreaterThanOrEqual(190);
    expect(tracker.received[1]).not.toHaveProperty('event');
    // The tracker said we are alone: offers would go to nobody, so none are made.
    expect(tracker.received[2]).toMatchObject({ numwant: 0, offers: [] });
  });

  it("reports the swarm's size from an announce response's complete + incomplete", async () => {
    const tracker = await scriptedTracker();
    tracker.onMessage((message, socket) =>
      socket.send(JSON.stringify({ action: 'announce', info_hash: message.info_hash, interval: 120, complete: 3, incomplete: 40 })),
    );
    const sizes: number[] = [];
    signaling([tracker.url]).join(INFO_HASH, { ...recorder().events, swarmSize: (peers) => sizes.push(peers) });
    await waitFor(() => sizes.length > 0, 'swarm size');
    expect(sizes).toEqual([43]);
  });

  it("reports a tracker's failure reason and warning message as warnings of that swarm, keeping the socket", async () => {
    const tracker = await scriptedTracker();
    tracker.onMessage((message, socket) =>
      socket.send(JSON.stringify({ action: 'announce', info_hash: message.info_hash, 'failure reason': 'info_hash not allowed' })),
    );
    const events = recorder();
    signaling([tracker.url]).join(INFO_HASH, events.events);
    const [warning] = await waitFor(() => events.warnings.length > 0 && events.warnings, 'warning');
    expect(warning).toContain('info_hash not allowed');
    expect(warning).toContain(tracker.url);
    tracker.broadcast({ action: 'announce', info_hash: INFO_HASH, 'warning message': 'slow down' });
    await waitFor(() => events.warnings.some((message) => message.includes('slow down')), 'warning message');
    expect(events.errors).toEqual([]);
    expect(tracker.sockets).toHaveLength(1);
    expect(tracker.sockets[0]!.readyState).toBe(WebSocket.OPEN);
  });

  it('pauses a refused swarm for the min interval the tracker asks, then announces again; the other swarm on the socket goes on', async () => {
    const tracker = await scriptedTracker();
    const refused = INFO_HASH;
    const other = infoHash('another rendition');
    let refusals = 0;
    tracker.onMessage((message, socket) => {
      if (message.info_hash === refused && refusals++ === 0) {
        socket.send(JSON.stringify({ action: 'announce', 'failure reason': 'rate limit exceeded: slow down', info_hash: refused, 'min interval': 1 }));
      } else {
        socket.send(JSON.stringify({ action: 'announce', info_hash: message.info_hash, interval: 120, complete: 0, incomplete: 2 }));
      }
    });
    const atRefused = recorder();
    const atOther = recorder();
    const client = signaling([tracker.url], { requestPeersIntervalMs: 50 });
    const swarm = client.join(refused, atRefused.events);
    const otherSwarm = client.join(other, atOther.events);
    const announcesOf = (hash: string) => tracker.received.filter((message) => message.info_hash === hash);
    await waitFor(() => atRefused.warnings.length > 0, 'refusal');
    const refusedAt = Date.now();
    expect(atRefused.warnings[0]).toContain('rate limit exceeded');
    // Asking for peers during the pause sends nothing for the refused swarm; the other swarm announces early as usual.
    for (let i = 0; i < 6; i++) {
      swarm.requestPeers();
      otherSwarm.requestPeers();
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(announcesOf(refused)).toHaveLength(1);
    expect(announcesOf(other).length).toBeGreaterThanOrEqual(2);
    await waitFor(() => announcesOf(refused).length === 2, 'announce after the pause', 3000);
    expect(Date.now() - refusedAt).toBeGreaterThanOrEqual(950);
    expect(tracker.sockets).toHaveLength(1);
    expect([...atRefused.errors, ...atOther.errors, ...atOther.warnings]).toEqual([]);
  });

  it('survives malformed tracker messages with warnings, and keeps working', async () => {
    const tracker = await scriptedTracker();
    const events = recorder();
    signaling([tracker.url]).join(INFO_HASH, events.events);
    await waitFor(() => tracker.received.length > 0, 'announce');
    for (const socket of tracker.sockets) {
      socket.send('not json');
      socket.send('[1,2]');
      socket.send(JSON.stringify({ action: 'announce', info_hash: INFO_HASH, peer_id: 'x'.repeat(20), offer: 'nope', offer_id: 1 }));
      socket.send(JSON.stringify({ action: 'announce', info_hash: INFO_HASH, peer_id: 'x'.repeat(20), offer_id: 'o'.repeat(20), offer: { type: 'offer', sdp: 'garbage' } }));
      socket.send(JSON.stringify({ action: 'announce', info_hash: INFO_HASH, peer_id: 'x'.repeat(20), answer: { type: 'answer', sdp: 'x' }, offer_id: 'unknown' }));
      socket.send(JSON.stringify({ action: 'scrape', files: {} }));
      socket.send(JSON.stringify({ action: 'announce', info_hash: 'short' }));
    }
    await waitFor(() => events.warnings.length >= 4, 'warnings');
    expect(events.warnings.filter((warning) => warning.includes('not a JSON object'))).toHaveLength(2);
    expect(events.warnings.some((warning) => warning.includes('malformed offer'))).toBe(true);
    expect(events.warnings.some((warning) => warning.includes('could not answer its offer'))).toBe(true);
    expect(events.peers).toHaveLength(0);
  });

  it('reconnects with backoff to a tracker that was down, then announces', async () => {
    const probe = await scriptedTracker();
    const port = Number(new URL(probe.url).port);
    await probe.close();
    const events = recorder();
    signaling([`ws://127.0.0.1:${port}`], { reconnectMinMs: 40, reconnectMaxMs: 400 }).join(INFO_HASH, events.events);
    await waitFor(() => events.errors.length >= 3, 'three failed attempts');
    expect(events.errors.every((error) => isShoalError(error, 'TRACKER') && error.message.includes('unreachable'))).toBe(true);
    const delays = events.errors.map((error) => Number(/reconnecting in ([\d.]+) s/.exec(error.message)?.[1]) * 1000);
    // Each delay is drawn from [ceiling/2, ceiling], the ceiling doubling from 40 ms.
    delays.forEach((delay, attempt) => {
      expect(delay).toBeGreaterThanOrEqual(Math.floor((40 * 2 ** attempt) / 2 / 100) * 100);
      expect(delay).toBeLessThanOrEqual(40 * 2 ** attempt + 100);
    });
    const revived = await scriptedTracker(port);
    const [announce] = await waitFor(() => revived.received.length > 0 && revived.received, 'announce after reconnect', 5000);
    expect(announce).toMatchObject({ event: 'started', info_hash: INFO_HASH });
  });

  it('tells its status listeners while no tracker answers, and again once one does', async () => {
    const probe = await scriptedTracker();
    const port = Number(new URL(probe.url).port);
    await probe.close();
    const client = signaling([`ws://127.0.0.1:${port}`], { reconnectMinMs: 40, reconnectMaxMs: 200 });
    const problems: (string | undefined)[] = [];
    client.watchStatus!((problem) => problems.push(problem));
    client.join(INFO_HASH, recorder().events);
    await waitFor(() => problems.length > 0, 'a problem');
    expect(problems[0]).toMatch(new RegExp(`^TRACKER: ws://127.0.0.1:${port}: unreachable`));
    const revived = await scriptedTracker(port);
    revived.onMessage((message, socket) => socket.send(JSON.stringify({ action: 'announce', info_hash: message.info_hash, interval: 120, complete: 0, incomplete: 1 })));
    await waitFor(() => problems.at(-1) === undefined && problems.length > 1, 'the problem cleared');
    // A failure of one tracker while it is down again counts again.
    await revived.close();
    await waitFor(() => typeof problems.at(-1) === 'string', 'the tracker lost again');
    expect(problems.at(-1)).toMatch(/connection lost|unreachable/);
  });

  it('reports RTCPeerConnection failing after start as a status problem, not a crash, and makes no offers', async () => {
    const tracker = await scriptedTracker();
    let calls = 0;
    const failingLater = Object.assign(function RTCPeerConnection(this: unknown, config: RTCConfiguration) {
      calls += 1;
      if (calls > 1) throw new Error('quota exceeded');
      return new FakeRTCPeerConnection(config);
    }, { prototype: FakeRTCPeerConnection.prototype });
    const client = signaling([tracker.url], { RTCPeerConnection: failingLater as unknown as typeof RTCPeerConnection });
    const problems: (string | undefined)[] = [];
    client.watchStatus!((problem) => problems.push(problem));
    const events = recorder();
    client.join(INFO_HASH, events.events);
    const [announce] = await waitFor(() => tracker.received.length > 0 && tracker.received, 'announce');
    expect(announce!.offers).toEqual([]);
    expect(problems).toEqual(['RTCPeerConnection failed: quota exceeded']);
    expect(events.warnings).toContain('could not create an RTCPeerConnection: quota exceeded');
  });

  it('re-announces as started after the tracker drops the connection', async () => {
    const tracker = await scriptedTracker();
    const events = recorder();
    signaling([tracker.url]).join(INFO_HASH, events.events);
    await waitFor(() => tracker.received.length === 1, 'announce');
    tracker.sockets[0]!.terminate();
    const [error] = await waitFor(() => events.errors.length > 0 && events.errors, 'error');
    expect(error!.message).toContain('connection lost');
    await waitFor(() => tracker.received.length === 2, 'second announce');
    // With the same key: the tracker may give the peer_id back before it sees the old socket gone.
    expect(tracker.received[1]).toMatchObject({ event: 'started', key: tracker.received[0]!.key });
  });

  it('sends stopped on leave, and destroy leaves no timer or socket behind', async () => {
    const tracker = await scriptedTracker();
    const clock = countingClock();
    const firstConnection = FakeRTCPeerConnection.created.length;
    const client = signaling([tracker.url], { clock });
    const swarm = client.join(INFO_HASH, recorder().events);
    client.join(infoHash('second rendition'), recorder().events);
    await waitFor(() => tracker.received.length === 2, 'announces');
    swarm.leave();
    await waitFor(() => tracker.received.length === 3, 'stopped');
    expect(tracker.received[2]).toMatchObject({ event: 'stopped', info_hash: INFO_HASH });
    expect(clock.pending.size).toBeGreaterThan(0);
    client.destroy();
    expect(clock.pending.size).toBe(0);
    await waitFor(() => tracker.sockets[0]!.readyState === WebSocket.CLOSED, 'socket closed');
    expect(tracker.received.at(-1)).toMatchObject({ event: 'stopped', info_hash: infoHash('second rendition') });
    const ours = FakeRTCPeerConnection.created.slice(firstConnection);
    expect(ours.length).toBeGreaterThan(0);
    expect(ours.filter((connection) => !connection.closed)).toHaveLength(0);
    expect(() => client.join(INFO_HASH, recorder().events)).toThrow(/DESTROYED/);
  });

  it('closes unanswered offers after the offer timeout', async () => {
    const tracker = await scriptedTracker();
    const client = signaling([tracker.url], { offerTimeoutMs: 100, offersPerAnnounce: 2 });
    client.join(INFO_HASH, recorder().events);
    await waitFor(() => tracker.received.length === 1, 'announce');
    const offered = FakeRTCPeerConnection.created.slice(-2);
    expect(offered.every((connection) => !connection.closed)).toBe(true);
    await waitFor(() => offered.every((connection) => connection.closed), 'offers closed');
  });

  it('warns, pointing at iceServers, when ICE fails, and emits no peer', async () => {
    const tracker = await referenceTracker();
    FakeRTCPeerConnection.failIce = true;
    const atAlice = recorder();
    signaling([tracker]).join(INFO_HASH, atAlice.events);
    await new Promise((resolve) => setTimeout(resolve, 50));
    signaling([tracker]).join(INFO_HASH, recorder().events);
    await waitFor(() => atAlice.warnings.some((warning) => warning.includes('ICE failed')), 'ICE warning');
    expect(atAlice.warnings.find((warning) => warning.includes('ICE failed'))).toContain('iceServers');
    expect(atAlice.peers).toHaveLength(0);
  });

  it('ignores offers beyond maxPeers', async () => {
    const tracker = await referenceTracker();
    const atHub = recorder();
    signaling([tracker], { maxPeers: 1 }).join(INFO_HASH, atHub.events);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const atFirst = recorder();
    signaling([tracker]).join(INFO_HASH, atFirst.events);
    await waitFor(() => atHub.peers.length === 1, 'first peer');
    const atSecond = recorder();
    signaling([tracker]).join(INFO_HASH, atSecond.events);
    // The second newcomer meets the first one, never the full hub.
    await waitFor(() => atSecond.peers.length === 1, 'second peer');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(atHub.peers).toHaveLength(1);
  });

  it('passes the configured ICE servers and a negotiated channel to every connection', async () => {
    const tracker = await scriptedTracker();
    const iceServers = [{ urls: 'stun:127.0.0.1:3478' }];
    signaling([tracker.url], { iceServers }).join(INFO_HASH, recorder().events);
    await waitFor(() => tracker.received.length === 1, 'announce');
    const connection = FakeRTCPeerConnection.created.at(-1)!;
    expect(connection.configuration.iceServers).toEqual(iceServers);
    expect(connection.channel!.init).toMatchObject({ negotiated: true, id: 0 });
    expect(connection.channel!.binaryType).toBe('arraybuffer');
    expect(connection.channel!.bufferedAmountLowThreshold).toBe(64 * 1024);
  });
});

describe('webrtc signaling options', () => {
  it('rejects bad options with a message naming the field', () => {
    const base = { WebSocket: WebSocket as unknown as WebSocketConstructor, RTCPeerConnection: FakeRTCPeerConnection as unknown as typeof RTCPeerConnection };
    expect(() => createWebRtcSignaling({ ...base, trackers: [] })).toThrow(/INVALID_OPTION.*options\.trackers/);
    expect(() => createWebRtcSignaling({ ...base, trackers: ['https://t.example'] })).toThrow(/options\.trackers must be ws/);
    expect(() => createWebRtcSignaling({ ...base, trackers: ['wss://t.example'], maxPeers: 0 })).toThrow(/options\.maxPeers/);
    expect(() => createWebRtcSignaling({ ...base, trackers: ['wss://t.example'], peerId: 'xyz' })).toThrow(/options\.peerId/);
    expect(() => createWebRtcSignaling({ ...base, trackers: ['wss://t.example'], RTCPeerConnection: 'yes' as any })).toThrow(
      /INVALID_OPTION: signaling options\.RTCPeerConnection must be a class like the browser.s RTCPeerConnection, got "yes"/,
    );
  });

  it('says WEBRTC_UNAVAILABLE, not INVALID_OPTION, where the environment lacks WebRTC or its constructor throws', () => {
    // Node has no RTCPeerConnection of its own.
    expect(() => createWebRtcSignaling({ trackers: ['wss://t.example'], WebSocket: WebSocket as unknown as WebSocketConstructor })).toThrow(
      'WEBRTC_UNAVAILABLE: this environment has no RTCPeerConnection (undefined)',
    );
    const noChannels = function RTCPeerConnection() {};
    expect(() => createWebRtcSignaling({ trackers: ['wss://t.example'], WebSocket: WebSocket as unknown as WebSocketConstructor, RTCPeerConnection: undefined }))
      .toThrow(/WEBRTC_UNAVAILABLE/);
    (globalThis as Record<string, unknown>).RTCPeerConnection = noChannels;
    try {
      expect(() => createWebRtcSignaling({ trackers: ['wss://t.example'], WebSocket: WebSocket as unknown as WebSocketConstructor }))
        .toThrow("WEBRTC_UNAVAILABLE: this environment's RTCPeerConnection has no data channels");
    } finally {
      delete (globalThis as Record<string, unknown>).RTCPeerConnection;
    }
    const throwing = Object.assign(function RTCPeerConnection() {
      throw new Error('blocked by policy');
    }, { prototype: { createDataChannel() {} } });
    expect(() => createWebRtcSignaling({
      trackers: ['wss://t.example'], WebSocket: WebSocket as unknown as WebSocketConstructor, RTCPeerConnection: throwing as unknown as typeof RTCPeerConnection,
    })).toThrow('WEBRTC_UNAVAILABLE: RTCPeerConnection cannot be created here: blocked by policy');
  });

  it('rejects an info_hash that is neither 20 binary nor 40 hex characters', () => {
    const client = signaling(['ws://127.0.0.1:9']);
    expect(() => client.join('abc', recorder().events)).toThrow(/INVALID_OPTION.*info_hash/);
  });
});
