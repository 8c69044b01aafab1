// Nodes sharing swarms, without sockets or Redis: two message handlers whose ClusterMemberships
// talk over an in-memory bus. Offers reach peers on the other node, joins and leaves are
// mirrored, a node that is lost takes its peers with it, and a peer id that reconnects elsewhere
// moves there.

import { describe, expect, it } from 'vitest';
import { ClusterMembership, type AddressableConnection, type ClusterBus } from '../src/cluster-membership.js';
import { Connection } from '../src/connection.js';
import { MessageHandler } from '../src/message-handler.js';
import { binaryId } from './support/ws-peer.js';

class TestConnection extends Connection implements AddressableConnection {
  static next = 1;
  readonly connectionId = TestConnection.next++;
  readonly sent: Record<string, unknown>[] = [];
  constructor() {
    super('127.0.0.1', '');
  }
  send(frame: string | Uint8Array): boolean {
    this.sent.push(JSON.parse(typeof frame === 'string' ? frame : new TextDecoder().decode(frame)) as Record<string, unknown>);
    return true;
  }
  close(): void {}
}

/** Delivers synchronously between the nodes registered on it. */
class MemoryNetwork {
  readonly buses = new Map<string, ClusterBus>();
  bus(nodeId: string): ClusterBus {
    const network = this;
    const bus: ClusterBus = {
      nodeId,
      onMessage: null,
      onNodeLost: null,
      onConnected: null,
      broadcast(payload) {
        for (const [id, other] of network.buses) if (id !== nodeId) other.onMessage?.(nodeId, payload.slice());
      },
      sendTo(target, payload) {
        network.buses.get(target)?.onMessage?.(nodeId, payload.slice());
      },
    };
    this.buses.set(nodeId, bus);
    return bus;
  }
}

function node(network: MemoryNetwork, nodeId: string) {
  const handler = new MessageHandler({ announceIntervalSec: 120, peerTimeoutSec: 300, maxOffersPerAnnounce: 10, maxSwarmsPerConnection: 10, maxScrapeInfoHashes: 10, fullScrape: false, messagesPerSecond: 0, messageBurst: 100 });
  const connections = new Map<number, TestConnection>();
  const membership = new ClusterMembership(handler.registry, network.bus(nodeId), (id) => connections.get(id), handler.offers);
  const connect = () => {
    const connection = new TestConnection();
    connections.set(connection.connectionId, connection);
    handler.handleOpen(connection, Date.now());
    return connection;
  };
  network.buses.get(nodeId)!.onConnected?.();
  return { handler, membership, connect, connections };
}

const hash = binaryId('cluster-swarm');
const announce = (peer: string, offers = 0, key?: string) =>
  JSON.stringify({
    action: 'announce', event: 'started', info_hash: hash, peer_id: binaryId(peer), left: 1, numwant: offers, key,
    offers: Array.from({ length: offers }, (_, i) => ({ offer: { type: 'offer', sdp: `sdp-${peer}-${i}` }, offer_id: binaryId(`${peer}-o${i}`) })),
  });

describe('ClusterMembership', () => {
  it('mirrors joins, relays offers and answers across nodes, and counts each peer once', () => {
    const network = new MemoryNetwork();
    const a = node(network, 'a');
    const b = node(network, 'b');
    const alice = a.connect();
    const bob = b.connect();
    a.handler.handleMessage(alice, announce('alice'), Date.now());
    b.handler.handleMessage(bob, announce('bob', 1), Date.now());
    // Bob's node knew alice: the response counts both, and the offer crossed to node a's socket.
    expect(bob.sent[0]).toMatchObject({ action: 'announce', incomplete: 2 });
    expect(alice.sent[1]).toMatchObject({ offer: { sdp: 'sdp-bob-0' }, peer_id: binaryId('bob') });
    // Node a remembers the offer it was relayed: an answer to another offer_id goes nowhere.
    a.handler.handleMessage(alice, JSON.stringify({ action: 'announce', info_hash: hash, peer_id: binaryId('alice'), to_peer_id: binaryId('bob'), offer_id: binaryId('forged'), answer: { type: 'answer', sdp: 'x' } }), Date.now());
    expect(alice.sent[2]).toMatchObject({ 'failure reason': expect.stringMatching(/no offer/) });
    expect(bob.sent).toHaveLength(1);
    a.handler.handleMessage(alice, JSON.stringify({ action: 'announce', info_hash: hash, peer_id: binaryId('alice'), to_peer_id: binaryId('bob'), offer_id: binaryId('bob-o0'), answer: { type: 'answer', sdp: 'a' } }), Date.now());
    expect(bob.sent[1]).toMatchObject({ answer: { sdp: 'a' }, peer_id: binaryId('alice') });
    for (const side of [a, b]) {
      expect(side.handler.registry.counts()).toMatchObject({ swarms: 1, peers: 2 });
      expect(side.membership.countLocal().peers).toBe(1);
    }
    expect(a.membership.counters).toMatchObject({ relaysReceived: 1, relaysSent: 1, malformed: 0 });
  });

  it('mirrors leaves and completions, drops a lost node\'s peers, and moves a peer id that reconnects elsewhere with its key', () => {
    const network = new MemoryNetwork();
    const a = node(network, 'a');
    const b = node(network, 'b');
    const alice = a.connect();
    const bob = b.connect();
    a.handler.handleMessage(alice, announce('alice', 0, 'alice-key'), Date.now());
    b.handler.handleMessage(bob, announce('bob'), Date.now());
    a.handler.handleMessage(alice, JSON.stringify({ action: 'announce', event: 'completed', info_hash: hash, peer_id: binaryId('alice'), left: 0 }), Date.now());
    expect(b.handler.registry.counts()).toMatchObject({ seeders: 1, leechers: 1 });

    // Someone else claims alice's id through node b: refused there, and node a keeps her.
    const mallory = b.connect();
    b.handler.handleMessage(mallory, announce('alice', 0, 'guess'), Date.now());
    expect(mallory.sent.at(-1)).toMatchObject({ 'failure reason': 'peer_id in use by another connection' });
    expect(a.membership.countLocal().peers).toBe(1);

    // Alice reconnects through node b with her key: node a forgets its old socket's claim.
    const aliceAgain = b.connect();
    b.handler.handleMessage(aliceAgain, announce('alice', 0, 'alice-key'), Date.now());
    expect(a.membership.countLocal().peers).toBe(0);
    expect(b.membership.countLocal().peers).toBe(2);
    a.handler.handleClose(alice);
    expect(b.handler.registry.counts().peers).toBe(2);

    // Bob's socket closes: node a drops him.
    b.handler.handleClose(bob);
    expect(a.handler.registry.counts().peers).toBe(1);

    // Node b is lost: node a drops everything it held.
    network.buses.get('a')!.onNodeLost!('b');
    expect(a.handler.registry.counts()).toMatchObject({ swarms: 0, peers: 0 });
  });

  it('keeps a peer id with the owner each node had when two first claims crossed, without the same key', () => {
    const network = new MemoryNetwork();
    const a = node(network, 'a');
    const b = node(network, 'b');
    // Apart (b's bus off the network), each node's socket claims the same id with its own key.
    const busB = network.buses.get('b')!;
    network.buses.delete('b');
    const first = a.connect();
    const second = b.connect();
    a.handler.handleMessage(first, announce('twin', 0, 'key-1'), Date.now());
    b.handler.handleMessage(second, announce('twin', 0, 'key-2'), Date.now());
    network.buses.set('b', busB);
    busB.onConnected!();
    expect(a.membership.counters.claimsRefused + b.membership.counters.claimsRefused).toBeGreaterThanOrEqual(2);
    expect(a.handler.registry.getPeer(hash, binaryId('twin'))!.owner).toBe(first);
    expect(b.handler.registry.getPeer(hash, binaryId('twin'))!.owner).toBe(second);
  });

  it('sends a whole membership in parts of at most 4,096 peers, 50 ms apart, each written when sent', async () => {
    const network = new MemoryNetwork();
    const a = node(network, 'a');
    const sockets = Array.from({ length: 10_000 }, (_, i) => {
      const socket = a.connect();
      a.handler.handleMessage(socket, announce(`many-${i}`), Date.now());
      return socket;
    });
    // What node b receives from a, by message type and entries.
    const parts: { type: number; bytes: number; atMs: number }[] = [];
    const b = node(network, 'b');
    const busB = network.buses.get('b')!;
    const receive = busB.onMessage!;
    busB.onMessage = (from, payload) => {
      if (from === 'a' && (payload[0] === 4 || payload[0] === 8)) parts.push({ type: payload[0], bytes: payload.length, atMs: Date.now() });
      receive(from, payload);
    };
    // Node b (re)connects: it asks for everyone's peers (HELLO); a's first part arrives at once (and
    // replaces the sync a started when b first appeared).
    busB.onConnected!();
    expect(parts).toHaveLength(1);
    expect(b.handler.registry.counts().peers).toBe(4096);
    // The last peer leaves before its part is sent: it is not brought back.
    a.handler.handleClose(sockets.at(-1)!);
    await expect.poll(() => parts.length, { timeout: 2000, interval: 10 }).toBe(3);
    expect(parts.map((part) => part.type)).toEqual([4, 8, 8]);
    // Entries of 46 bytes (these peers have no key: its length byte says 0): 4,096, 4,096 and 1,807 peers.
    expect(parts.map((part) => (part.bytes - 1) / 46)).toEqual([4096, 4096, 1807]);
    for (let i = 1; i < parts.length; i++) expect(parts[i]!.atMs - parts[i - 1]!.atMs).toBeGreaterThanOrEqual(45);
    expect(b.handler.registry.counts().peers).toBe(9999);
  });

  it('ignores what it cannot read, and re-syncs a node that comes back', () => {
    const network = new MemoryNetwork();
    const a = node(network, 'a');
    const b = node(network, 'b');
    a.handler.handleMessage(a.connect(), announce('alice'), Date.now());
    network.buses.get('b')!.onMessage!('a', Uint8Array.of(1, 2, 3));
    network.buses.get('b')!.onMessage!('a', Uint8Array.of(99));
    expect(b.membership.counters.malformed).toBe(2);
    network.buses.get('b')!.onNodeLost!('a');
    expect(b.handler.registry.counts().peers).toBe(0);
    // Node a reconnects (its bus says so): it sends its whole membership.
    network.buses.get('a')!.onConnected!();
    expect(b.handler.registry.counts().peers).toBe(1);
  });
});
