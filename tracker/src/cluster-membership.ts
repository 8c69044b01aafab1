// Several tracker nodes (worker threads of one process, or processes on several machines) act
// as one tracker. Each node keeps every swarm's full membership: its own peers, owned by its
// sockets, and the other nodes' peers, owned by RemoteConnection stand-ins. An announce samples
// offer targets from the whole swarm as before; sending to a stand-in relays the frame's bytes
// to the node that holds the socket. Nodes tell each other only what changes membership (join,
// completion, owner change, leave), never re-announces, so the traffic between nodes is the
// relayed offers and answers plus one short message per join and per leave.
//
// A peer id keeps its owner across nodes as on one (swarm-registry.ts): a join carries the
// peer's key, and another node's claim on a peer id held by a different owner moves it only when
// it shows the same key (the client reconnected through that node). An offer relayed to another
// node's socket says which offer it is, so that node's offer book lets only that socket answer it.
//
// The transport (a BroadcastChannel between threads, Redis pub/sub between machines) is a
// ClusterBus; this file knows no sockets and no Redis, like the message handler it sits beside.
// The messages' bytes: membership-messages.ts; a whole membership in parts: membership-sync.ts.

import type { SwarmRegistry, PeerEntry } from './swarm-registry.js';
import { Connection } from './connection.js';
import {
  BYE, ENTRY_BYTES, HELLO, ID_BYTES, JOIN, LEAVE, OFFER_HEADER_BYTES, RELAY, RELAY_OFFER, SYNC, SYNC_MORE, decodeEntry, encodeEntry, readId, writeId,
} from './membership-messages.js';
import { MembershipSync } from './membership-sync.js';
import type { OfferBook } from './offer-book.js';

/** How nodes reach each other. Implementations frame messages with the sender's id. */
export interface ClusterBus {
  readonly nodeId: string;
  /** To every other node; a promise (where the transport acknowledges) settles once it is handed over to all of them. */
  broadcast(payload: Uint8Array): Promise<void> | void;
  /** To one node. */
  sendTo(nodeId: string, payload: Uint8Array): void;
  /** Set by ClusterMembership: a payload from another node. */
  onMessage: ((from: string, payload: Uint8Array) => void) | null;
  /** Set by ClusterMembership: a node is gone (left, or its lease ran out). */
  onNodeLost: ((nodeId: string) => void) | null;
  /** Set by ClusterMembership: this node (re)joined the bus; others must learn its peers. */
  onConnected: (() => void) | null;
}

/** What a node (or, for a thread that exited, the main thread on its behalf) sends when leaving. */
export const LEAVING_PAYLOAD = Uint8Array.of(BYE);

/** A socket on another node, as this node's registry and message handler see it. */
export class RemoteConnection extends Connection {
  constructor(
    readonly nodeId: string,
    readonly connectionId: number,
    private readonly membership: ClusterMembership,
  ) {
    super('', '');
  }

  send(frame: string | Uint8Array): boolean {
    this.membership.relay(this, frame);
    return true;
  }

  override sendOffer(frame: Uint8Array, infoHash: string, offererId: string, offerId: string): boolean {
    this.membership.relayOffer(this, frame, infoHash, offererId, offerId);
    return false;
  }

  /** Closing is the owning node's business; a stand-in has nothing to close. */
  close(): void {}
}

/** A local connection the membership can address: the server gives each socket a number. */
export interface AddressableConnection extends Connection {
  readonly connectionId: number;
  /**
   * Holds frames to this socket until `handedOver` settles: a client told "you joined" can then
   * rely on every node knowing it (its next message may reach another node).
   */
  holdUntil?(handedOver: Promise<void>): void;
}

export interface MembershipCounters {
  joinsSent: number;
  leavesSent: number;
  relaysSent: number;
  relaysReceived: number;
  /** Relays for a socket that had closed meanwhile. */
  relaysUndeliverable: number;
  nodesLost: number;
  /** Messages from other nodes that could not be read. */
  malformed: number;
  /** Another node's join for a peer id held here by another owner, without that peer's key: ignored. */
  claimsRefused: number;
}

export class ClusterMembership {
  readonly counters: MembershipCounters = { joinsSent: 0, leavesSent: 0, relaysSent: 0, relaysReceived: 0, relaysUndeliverable: 0, nodesLost: 0, malformed: 0, claimsRefused: 0 };
  private readonly remote = new Map<string, Map<number, RemoteConnection>>();
  private localPeerCount = 0;
  private localSeederCount = 0;
  /** Whether the local counts must be recomputed (a membership change since the last count). */
  private localDirty = true;
  private readonly encoder = new TextEncoder();
  private readonly sync: MembershipSync;

  constructor(
    private readonly registry: SwarmRegistry<Connection>,
    private readonly bus: ClusterBus,
    /** The local socket with this number, if still open. */
    private readonly localConnection: (connectionId: number) => AddressableConnection | undefined,
    /** Where offers relayed to this node's sockets are remembered (the message handler's book). */
    private readonly offers: OfferBook<PeerEntry<Connection>> | null = null,
  ) {
    const handlerRemoved = registry.onPeerRemoved;
    registry.onPeerRemoved = (peer) => {
      handlerRemoved?.(peer);
      this.peerRemoved(peer);
    };
    registry.onPeerChanged = (peer) => this.peerChanged(peer);
    registry.expiresElsewhere = (peer) => peer.owner instanceof RemoteConnection;
    bus.onMessage = (from, payload) => {
      try {
        this.receive(from, payload);
      } catch {
        // Another program on our channels, or a version skew between nodes: one message lost, not the node.
        this.counters.malformed++;
      }
    };
    bus.onNodeLost = (nodeId) => this.forgetNode(nodeId);
    this.sync = new MembershipSync(
      (destination, payload) => (destination === null ? void bus.broadcast(payload) : bus.sendTo(destination, payload)),
      (peer) => (peer.owner instanceof RemoteConnection ? null : (peer.owner as AddressableConnection).connectionId),
    );
    bus.onConnected = () => {
      // Whoever missed our joins while we were away gets the whole list; we ask for theirs.
      this.sync.start(null, this.localPeers());
      this.bus.broadcast(Uint8Array.of(HELLO));
    };
  }

  /** Other nodes this node currently holds peers of. */
  get remoteNodes(): number {
    return this.remote.size;
  }

  /** Tells the others this node is leaving, so they drop its peers now rather than at lease end; stops syncs still sending. */
  leave(): void {
    this.sync.stopAll();
    this.bus.broadcast(LEAVING_PAYLOAD);
  }

  relay(target: RemoteConnection, frame: string | Uint8Array): void {
    const bytes = typeof frame === 'string' ? this.encoder.encode(frame) : frame;
    const payload = new Uint8Array(5 + bytes.length);
    payload[0] = RELAY;
    new DataView(payload.buffer).setUint32(1, target.connectionId);
    payload.set(bytes, 5);
    this.bus.sendTo(target.nodeId, payload);
    this.counters.relaysSent++;
  }

  /** An offer for another node's socket, with what that node's offer book must remember. */
  relayOffer(target: RemoteConnection, frame: Uint8Array, infoHash: string, offererId: string, offerId: string): void {
    const start = 1 + OFFER_HEADER_BYTES;
    const payload = new Uint8Array(start + frame.length);
    payload[0] = RELAY_OFFER;
    new DataView(payload.buffer).setUint32(1, target.connectionId);
    writeId(payload, 5, infoHash);
    writeId(payload, 5 + ID_BYTES, offererId);
    writeId(payload, 5 + ID_BYTES * 2, offerId);
    payload.set(frame, start);
    this.bus.sendTo(target.nodeId, payload);
    this.counters.relaysSent++;
  }

  private peerChanged(peer: PeerEntry<Connection>): void {
    if (peer.owner instanceof RemoteConnection) return;
    const owner = peer.owner as AddressableConnection;
    this.hold(owner, this.bus.broadcast(encodeEntry(JOIN, peer, owner.connectionId)));
    this.counters.joinsSent++;
    this.localDirty = true;
  }

  private peerRemoved(peer: PeerEntry<Connection>): void {
    const owner = peer.owner;
    if (owner instanceof RemoteConnection) {
      if (owner.swarmCount === 0) this.remote.get(owner.nodeId)?.delete(owner.connectionId);
      return;
    }
    const local = owner as AddressableConnection;
    this.hold(local, this.bus.broadcast(encodeEntry(LEAVE, peer, local.connectionId)));
    this.counters.leavesSent++;
    this.localDirty = true;
  }

  /**
   * Peers and seeders owned by this node's sockets: the registry's counts minus the stand-ins'
   * peers, recomputed (O(remote peers)) only when asked after a change, i.e. per stats request.
   */
  countLocal(): { peers: number; seeders: number } {
    if (this.localDirty) {
      let peers = 0;
      let seeders = 0;
      for (const connections of this.remote.values()) {
        for (const connection of connections.values()) {
          for (const peer of connection.allPeers()) {
            peers++;
            if (peer.complete) seeders++;
          }
        }
      }
      const all = this.registry.counts();
      this.localPeerCount = all.peers - peers;
      this.localSeederCount = all.seeders - seeders;
      this.localDirty = false;
    }
    return { peers: this.localPeerCount, seeders: this.localSeederCount };
  }

  private hold(owner: AddressableConnection, handedOver: Promise<void> | void): void {
    if (handedOver && !owner.closed) owner.holdUntil?.(handedOver);
  }

  private receive(from: string, payload: Uint8Array): void {
    const type = payload[0];
    const view = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
    switch (type) {
      case JOIN:
        if (this.applyJoin(from, view, 1) !== payload.length) throw new RangeError('JOIN length');
        return;
      case LEAVE: {
        if (payload.length !== 1 + ENTRY_BYTES) throw new RangeError('LEAVE length');
        const { connectionId, infoHash, peerId } = decodeEntry(view, 1, false);
        const peer = this.registry.getPeer(infoHash, peerId);
        const owner = peer?.owner;
        if (peer && owner instanceof RemoteConnection && owner.nodeId === from && owner.connectionId === connectionId) this.registry.remove(peer);
        this.localDirty = true;
        return;
      }
      case RELAY: {
        if (payload.length < 5) throw new RangeError('RELAY length');
        this.counters.relaysReceived++;
        const connection = this.localConnection(view.getUint32(1));
        if (!connection || connection.closed) {
          this.counters.relaysUndeliverable++;
          return;
        }
        connection.send(payload.subarray(5));
        return;
      }
      case RELAY_OFFER:
        return this.receiveOffer(payload, view);
      case SYNC:
      case SYNC_MORE: {
        if (type === SYNC) this.forgetNode(from, false);
        for (let offset = 1; offset < payload.length; ) offset = this.applyJoin(from, view, offset);
        return;
      }
      case HELLO:
        this.sync.start(from, this.localPeers());
        return;
      case BYE:
        this.forgetNode(from);
        return;
      default:
        throw new RangeError(`unknown message type ${type}`);
    }
  }

  private receiveOffer(payload: Uint8Array, view: DataView): void {
    if (payload.length < 1 + OFFER_HEADER_BYTES) throw new RangeError('RELAY_OFFER length');
    this.counters.relaysReceived++;
    const connection = this.localConnection(view.getUint32(1));
    if (!connection || connection.closed) {
      this.counters.relaysUndeliverable++;
      return;
    }
    connection.send(payload.subarray(1 + OFFER_HEADER_BYTES));
    const target = connection.peerIn(readId(payload, 5));
    if (target) this.offers?.record(readId(payload, 5 + ID_BYTES * 2), target, readId(payload, 5 + ID_BYTES), Date.now());
  }

  /** Applies the join entry at `offset`; returns the offset after it. */
  private applyJoin(from: string, view: DataView, offset: number): number {
    const { connectionId, complete, infoHash, peerId, key, end } = decodeEntry(view, offset);
    let nodeConnections = this.remote.get(from);
    if (!nodeConnections) {
      nodeConnections = new Map();
      this.remote.set(from, nodeConnections);
    }
    let owner = nodeConnections.get(connectionId);
    if (!owner) {
      owner = new RemoteConnection(from, connectionId, this);
      nodeConnections.set(connectionId, owner);
    }
    const result = this.registry.announce({ infoHash, peerId, owner, event: 'update', left: complete ? 0 : 1, key, nowMs: Date.now() });
    if (result.taken) {
      // Claimed by two owners at once without the same key (only in a race of first joins): each node keeps the one it had.
      this.counters.claimsRefused++;
      if (owner.swarmCount === 0) nodeConnections.delete(connectionId);
      return end;
    }
    const peer = result.peer!;
    // The peer id reconnected through another node, with its key: our old socket no longer holds it.
    if (result.replacedOwner && result.replacedOwner !== owner) {
      const previous = result.replacedOwner;
      previous.dropPeer(peer);
      if (previous instanceof RemoteConnection && previous.swarmCount === 0) this.remote.get(previous.nodeId)?.delete(previous.connectionId);
    }
    owner.addPeer(peer);
    this.localDirty = true;
    return end;
  }

  /** Drops every peer a node held; `counted` is false when the node is only being re-synced. */
  private forgetNode(nodeId: string, counted = true): void {
    const connections = this.remote.get(nodeId);
    if (!connections) return;
    this.remote.delete(nodeId);
    for (const connection of connections.values()) for (const peer of connection.allPeers()) this.registry.remove(peer);
    if (counted) this.counters.nodesLost++;
    this.localDirty = true;
  }

  /** Every peer owned here, for a node that (re)joined. */
  private localPeers(): PeerEntry<Connection>[] {
    const local: PeerEntry<Connection>[] = [];
    for (const swarm of this.registry.swarms.values()) for (const peer of swarm.peers) if (!(peer.owner instanceof RemoteConnection)) local.push(peer);
    return local;
  }
}
