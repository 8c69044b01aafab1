// A node's whole membership for the nodes that must learn it (all of them when this node
// (re)connects, one that asked with HELLO): in parts of at most SYNC_PART_PEERS peers, the first
// a SYNC (the receiver forgets what it held of this node, then applies it), the rest SYNC_MORE,
// one part per SYNC_PART_GAP_MS per destination.
//
// One message of every peer reached Redis's default pub/sub output limit (`client-output-buffer-
// limit pubsub 32mb`) at ~700,000 peers, and cost a receiver seconds of work at once. A part is
// under 300 KB, and at 4,096 peers per 50 ms (82,000 peers/s) a receiver, which applies a join
// in about 5.6 us (BENCHMARKS.md, T4), spends under half a core on it: Redis need not hold more
// for it than it reads. A receiver lacks the parts not yet sent: 700,000 peers take 8.5 s.
//
// The peers are listed when a sync starts, and each part is written when it is sent, from their
// state then: a peer that left meanwhile (its LEAVE went out already) is skipped, not brought
// back; one that changed goes as it is now; one that joined since goes by its own JOIN, which
// follows the first part.

import type { Connection } from './connection.js';
import { SYNC, SYNC_MORE, entryBytes, writeEntry } from './membership-messages.js';
import type { PeerEntry } from './swarm-registry.js';

export const SYNC_PART_PEERS = 4096;
export const SYNC_PART_GAP_MS = 50;

/** null: every other node. */
type Destination = string | null;

export class MembershipSync {
  private readonly running = new Map<Destination, NodeJS.Timeout>();

  constructor(
    private readonly send: (destination: Destination, payload: Uint8Array) => void,
    /** The socket that holds a peer on this node, or null once another node's socket does. */
    private readonly localConnectionId: (peer: PeerEntry<Connection>) => number | null,
  ) {}

  /** Sends `peers` to `destination`, replacing a sync still going there. */
  start(destination: Destination, peers: PeerEntry<Connection>[]): void {
    this.stop(destination);
    const sendPart = (from: number) => {
      this.running.delete(destination);
      this.send(destination, this.encodePart(from === 0 ? SYNC : SYNC_MORE, peers, from));
      const next = from + SYNC_PART_PEERS;
      if (next >= peers.length) return;
      const timer = setTimeout(() => sendPart(next), SYNC_PART_GAP_MS);
      timer.unref();
      this.running.set(destination, timer);
    };
    sendPart(0);
  }

  /** Syncs still sending parts. */
  get active(): number {
    return this.running.size;
  }

  stop(destination: Destination): void {
    clearTimeout(this.running.get(destination));
    this.running.delete(destination);
  }

  stopAll(): void {
    for (const timer of this.running.values()) clearTimeout(timer);
    this.running.clear();
  }

  private encodePart(type: number, peers: PeerEntry<Connection>[], from: number): Uint8Array {
    const end = Math.min(peers.length, from + SYNC_PART_PEERS);
    const owners: number[] = [];
    let bytes = 1;
    for (let i = from; i < end; i++) {
      const peer = peers[i]!;
      const owner = peer.index >= 0 ? this.localConnectionId(peer) : null;
      owners.push(owner ?? -1);
      if (owner !== null) bytes += entryBytes(peer, true);
    }
    const payload = new Uint8Array(bytes);
    payload[0] = type;
    let offset = 1;
    for (let i = from; i < end; i++) {
      const owner = owners[i - from]!;
      if (owner >= 0) offset = writeEntry(payload, offset, peers[i]!, owner, true);
    }
    return payload;
  }
}
