// One client connection as the message handler sees it: its rate-limit bucket and the peer it
// holds in each swarm it joined. The socket layer (uws-connection.ts) adds the socket itself.

import type { PeerEntry } from './swarm-registry.js';

/** The socket as the handler sees it. */
export interface ClientSocket {
  /**
   * Sends one text frame, given as a string or as its UTF-8 bytes (valid only during the call:
   * copy them to keep them); returns false when the socket was over its backpressure limit.
   */
  send(frame: string | Uint8Array): boolean;
  /** Closes with a WebSocket close code and a short reason. */
  close(code: number, reason: string): void;
}

/**
 * One client connection: the handler's per-socket state. The server adapter extends it with
 * the actual socket (send/close), so each connection is a single object. Memory per peer
 * matters here: most connections join one swarm, so the map is only made for a second one.
 */
export abstract class Connection implements ClientSocket {
  tokens = 0;
  refilledMs = 0;
  closed = false;
  private onlyPeer: PeerEntry<Connection> | null = null;
  private peersByInfoHash: Map<string, PeerEntry<Connection>> | null = null;
  constructor(
    readonly ip: string,
    readonly origin: string,
  ) {}

  abstract send(frame: string | Uint8Array): boolean;
  abstract close(code: number, reason: string): void;

  /**
   * Sends a relayed offer (its frame) to this connection's peer; true when the socket is on this
   * node, which must then remember the offer (a stand-in for another node's socket relays it
   * with what that node needs to remember it, and returns false).
   */
  sendOffer(frame: Uint8Array, _infoHash: string, _offererId: string, _offerId: string): boolean {
    this.send(frame);
    return true;
  }

  /** This connection's peer in a swarm. */
  peerIn(infoHash: string): PeerEntry<Connection> | undefined {
    if (this.peersByInfoHash) return this.peersByInfoHash.get(infoHash);
    return this.onlyPeer?.swarm.infoHash === infoHash ? this.onlyPeer : undefined;
  }

  get swarmCount(): number {
    return this.peersByInfoHash ? this.peersByInfoHash.size : this.onlyPeer ? 1 : 0;
  }

  addPeer(peer: PeerEntry<Connection>): void {
    if (this.peersByInfoHash) {
      this.peersByInfoHash.set(peer.swarm.infoHash, peer);
    } else if (!this.onlyPeer || this.onlyPeer.swarm.infoHash === peer.swarm.infoHash) {
      this.onlyPeer = peer;
    } else {
      this.peersByInfoHash = new Map([[this.onlyPeer.swarm.infoHash, this.onlyPeer], [peer.swarm.infoHash, peer]]);
      this.onlyPeer = null;
    }
  }

  /** Forgets `peer` if it is still this connection's peer in its swarm. */
  dropPeer(peer: PeerEntry<Connection>): void {
    const infoHash = peer.swarm.infoHash;
    if (this.peersByInfoHash) {
      if (this.peersByInfoHash.get(infoHash) === peer) this.peersByInfoHash.delete(infoHash);
    } else if (this.onlyPeer === peer) {
      this.onlyPeer = null;
    }
  }

  /** A snapshot, safe to iterate while peers are removed. */
  allPeers(): PeerEntry<Connection>[] {
    if (this.peersByInfoHash) return [...this.peersByInfoHash.values()];
    return this.onlyPeer ? [this.onlyPeer] : [];
  }
}
