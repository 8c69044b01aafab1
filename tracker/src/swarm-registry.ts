// Swarm bookkeeping as plain code: no sockets, no timers, no I/O. Every operation the server
// performs per message is O(1) (or O(k) for k sampled peers); nothing walks a whole swarm.
//
// - A swarm keeps its peers in a dense array plus an id -> peer map. Each peer knows its own
//   array index, so leaving is a swap-with-last and random sampling is a partial Fisher-Yates
//   shuffle over the array itself.
// - All peers of all swarms sit on one intrusive list ordered by their last announce. An
//   announce moves a peer to the tail; expiry pops from the head until it meets a live peer.
// - A swarm whose last peer leaves is deleted at once.
// - A peer id belongs to the owner that announced it first. Another owner's announce for it
//   changes nothing (`taken`), unless it shows the same `key` the peer joined with: only the
//   client that made the key knows it (a reconnecting client moving to its new socket). So only
//   the owner's own `stopped` (or one showing the key) removes a peer.
//
// Public on its own as `@shoal/tracker/swarm-registry` (the swarm simulator reuses it); with a
// seeded `random` its sampling repeats exactly.

/** One peer's membership in one swarm. `owner` is whatever the server uses for a connection. */
export interface PeerEntry<Owner> {
  readonly peerId: string;
  readonly swarm: Swarm<Owner>;
  owner: Owner;
  /** The secret the peer joined with (BitTorrent's announce `key`), or null: what a takeover must show. */
  readonly key: string | null;
  complete: boolean;
  lastSeenMs: number;
  /** Position in `swarm.peers`; -1 once removed. */
  index: number;
  /** Neighbours on the registry's expiry list (oldest announce first). */
  older: PeerEntry<Owner> | null;
  newer: PeerEntry<Owner> | null;
}

export class Swarm<Owner> {
  readonly peers: PeerEntry<Owner>[] = [];
  readonly byId = new Map<string, PeerEntry<Owner>>();
  complete = 0;
  incomplete = 0;
  /** Transitions to complete seen by this tracker while the swarm existed. */
  downloaded = 0;
  constructor(readonly infoHash: string) {}

  get size(): number {
    return this.peers.length;
  }
}

export type AnnounceEvent = 'started' | 'update' | 'completed' | 'stopped' | 'paused';

export interface AnnounceInput<Owner> {
  infoHash: string;
  peerId: string;
  owner: Owner;
  event: AnnounceEvent;
  /** Bytes left; 0 means the peer is a seeder. */
  left: number;
  /** The announce's `key`, if it has one. */
  key?: string | null;
  nowMs: number;
}

export interface AnnounceResult<Owner> {
  /** The swarm after the announce (still returned, with zero counts, after the last `stopped`). */
  swarm: Swarm<Owner>;
  /** The peer's entry, or null after `stopped`. */
  peer: PeerEntry<Owner> | null;
  /** True when this announce added the peer to the swarm. */
  joined: boolean;
  /** The owner that held this peer id before, when another owner took it over (with the peer's key). */
  replacedOwner: Owner | null;
  /** The peer id belongs to another owner, which keeps it: nothing changed, `peer` is null. */
  taken: boolean;
}

/** Whether an announce by another owner, showing `key`, may take `peer` over. */
export function provesKey(peer: PeerEntry<unknown>, key: string | null | undefined): boolean {
  return peer.key !== null && key === peer.key;
}

export interface RegistryCounts {
  swarms: number;
  peers: number;
  seeders: number;
  leechers: number;
}

export interface SwarmRegistryOptions {
  /** Uniform in [0, 1), as Math.random (the default); a seeded one makes samplePeers repeatable. */
  random?: () => number;
}

export class SwarmRegistry<Owner> {
  readonly swarms = new Map<string, Swarm<Owner>>();
  private readonly random: () => number;
  private oldest: PeerEntry<Owner> | null = null;
  private newest: PeerEntry<Owner> | null = null;
  private peerCount = 0;
  private seederCount = 0;

  /** Called whenever a peer leaves a swarm for any reason (stopped, expiry, owner closed). */
  onPeerRemoved: ((peer: PeerEntry<Owner>) => void) | null = null;
  /** Called when a peer joins, changes owner, or becomes complete (what other nodes must learn). */
  onPeerChanged: ((peer: PeerEntry<Owner>) => void) | null = null;
  /**
   * Peers for which this returns true are never expired here (their liveness is another node's
   * to judge): an expiry sweep moves them to the newest end instead.
   */
  expiresElsewhere: ((peer: PeerEntry<Owner>) => boolean) | null = null;

  constructor(options: SwarmRegistryOptions = {}) {
    this.random = options.random ?? Math.random;
  }

  counts(): RegistryCounts {
    return {
      swarms: this.swarms.size,
      peers: this.peerCount,
      seeders: this.seederCount,
      leechers: this.peerCount - this.seederCount,
    };
  }

  getSwarm(infoHash: string): Swarm<Owner> | undefined {
    return this.swarms.get(infoHash);
  }

  getPeer(infoHash: string, peerId: string): PeerEntry<Owner> | undefined {
    return this.swarms.get(infoHash)?.byId.get(peerId);
  }

  /**
   * Applies one announce, with bittorrent-tracker's semantics: an unknown peer joins whatever
   * its event says (except `stopped`), `completed` or `left: 0` makes it a seeder, `stopped`
   * removes it. A peer id held by another owner moves to the announcing one only when the
   * announce shows the peer's key (a client reconnecting before its old socket timed out);
   * otherwise the result is `taken` and nothing changes.
   */
  announce(input: AnnounceInput<Owner>): AnnounceResult<Owner> {
    let swarm = this.swarms.get(input.infoHash);
    let peer = swarm?.byId.get(input.peerId);
    if (peer && peer.owner !== input.owner && !provesKey(peer, input.key)) {
      return { swarm: swarm!, peer: null, joined: false, replacedOwner: null, taken: true };
    }

    if (input.event === 'stopped') {
      if (peer) this.remove(peer);
      return { swarm: swarm ?? new Swarm<Owner>(input.infoHash), peer: null, joined: false, replacedOwner: null, taken: false };
    }

    let joined = false;
    let replacedOwner: Owner | null = null;
    if (!swarm) {
      swarm = new Swarm<Owner>(input.infoHash);
      this.swarms.set(input.infoHash, swarm);
    }
    if (!peer) {
      const complete = input.left === 0 || input.event === 'completed';
      peer = {
        peerId: input.peerId,
        swarm,
        owner: input.owner,
        key: input.key ?? null,
        complete,
        lastSeenMs: input.nowMs,
        index: swarm.peers.length,
        older: null,
        newer: null,
      };
      swarm.peers.push(peer);
      swarm.byId.set(input.peerId, peer);
      if (complete) {
        swarm.complete++;
        this.seederCount++;
        if (input.event === 'completed') swarm.downloaded++;
      } else {
        swarm.incomplete++;
      }
      this.peerCount++;
      this.appendNewest(peer);
      joined = true;
      this.onPeerChanged?.(peer);
    } else {
      let changed = false;
      if (peer.owner !== input.owner) {
        replacedOwner = peer.owner;
        peer.owner = input.owner;
        changed = true;
      }
      if (!peer.complete && (input.left === 0 || input.event === 'completed')) {
        peer.complete = true;
        swarm.complete++;
        swarm.incomplete--;
        swarm.downloaded++;
        this.seederCount++;
        changed = true;
      }
      this.touch(peer, input.nowMs);
      if (changed) this.onPeerChanged?.(peer);
    }
    return { swarm, peer, joined, replacedOwner, taken: false };
  }

  /** Marks a peer as alive without changing its state (e.g. it relayed an answer). */
  touch(peer: PeerEntry<Owner>, nowMs: number): void {
    peer.lastSeenMs = nowMs;
    if (this.newest === peer) return;
    this.unlink(peer);
    this.appendNewest(peer);
  }

  /** Removes a peer from its swarm; frees the swarm when it becomes empty. */
  remove(peer: PeerEntry<Owner>): void {
    if (peer.index < 0) return;
    const swarm = peer.swarm;
    const last = swarm.peers.pop()!;
    if (last !== peer) {
      swarm.peers[peer.index] = last;
      last.index = peer.index;
    }
    peer.index = -1;
    swarm.byId.delete(peer.peerId);
    if (peer.complete) {
      swarm.complete--;
      this.seederCount--;
    } else {
      swarm.incomplete--;
    }
    this.peerCount--;
    this.unlink(peer);
    if (swarm.peers.length === 0) this.swarms.delete(swarm.infoHash);
    this.onPeerRemoved?.(peer);
  }

  /**
   * Up to `count` distinct random peers of the swarm other than `exclude`, in O(count):
   * a partial Fisher-Yates shuffle of the swarm's array (which keeps indexes in step).
   */
  samplePeers(swarm: Swarm<Owner>, count: number, exclude: PeerEntry<Owner> | null): PeerEntry<Owner>[] {
    const peers = swarm.peers;
    const n = peers.length;
    const picked: PeerEntry<Owner>[] = [];
    if (count <= 0) return picked;
    for (let i = 0; i < n && picked.length < count; i++) {
      const j = i + Math.floor(this.random() * (n - i));
      const chosen = peers[j]!;
      if (j !== i) {
        const displaced = peers[i]!;
        peers[i] = chosen;
        chosen.index = i;
        peers[j] = displaced;
        displaced.index = j;
      }
      if (chosen !== exclude) picked.push(chosen);
    }
    return picked;
  }

  /** Removes every peer whose last announce is older than `cutoffMs`; returns how many. */
  expire(cutoffMs: number): number {
    let removed = 0;
    const elsewhere = this.expiresElsewhere;
    while (this.oldest && this.oldest.lastSeenMs < cutoffMs) {
      const peer = this.oldest;
      if (elsewhere?.(peer)) {
        // Moves it to the newest end, with the time the sweep reached it: at most one move per peer per timeout.
        this.touch(peer, cutoffMs + 1);
        if (this.oldest === peer) break;
        continue;
      }
      this.remove(peer);
      removed++;
    }
    return removed;
  }

  /** Removes a whole swarm (e.g. its info_hash left the allow-list); returns peers removed. */
  removeSwarm(infoHash: string): number {
    const swarm = this.swarms.get(infoHash);
    if (!swarm) return 0;
    let removed = 0;
    while (swarm.peers.length > 0) {
      this.remove(swarm.peers[swarm.peers.length - 1]!);
      removed++;
    }
    return removed;
  }

  private appendNewest(peer: PeerEntry<Owner>): void {
    peer.older = this.newest;
    peer.newer = null;
    if (this.newest) this.newest.newer = peer;
    else this.oldest = peer;
    this.newest = peer;
  }

  private unlink(peer: PeerEntry<Owner>): void {
    if (peer.older) peer.older.newer = peer.newer;
    else if (this.oldest === peer) this.oldest = peer.newer;
    if (peer.newer) peer.newer.older = peer.older;
    else if (this.newest === peer) this.newest = peer.older;
    peer.older = null;
    peer.newer = null;
  }
}
