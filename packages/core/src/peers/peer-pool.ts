// The peer pool of one stream's swarm: joining and leaving it through signaling, admitting peers
// (bans, maxPeers), asking trackers for more, each session's hooks, bans, and announcing our
// availability to the peers. What peers deliver goes to the engine's transfers (PeerPoolOwner).
import type { EngineEmit, StreamStats } from '../engine-events.js';
import { infoHash } from '../identity.js';
import { createLogger } from '../logger.js';
import type { EngineOptions } from '../options.js';
import { SegmentState, availabilityMap, type SegmentStateValue } from '../wire/peer-protocol.js';
import { PeerSession, type PeerSessionHooks } from './peer.js';
import type { Clock, PeerTransport, SegmentStore, Signaling, SwarmSignal } from '../types.js';
import type { UploadGovernor } from '../upload/upload-governor.js';

const log = createLogger('shoal:core:peer-pool');

/** How often, at most, the pool asks the trackers for more peers while below target. */
const PEER_REQUEST_INTERVAL_MS = 5000;

/**
 * What the pool hands to the engine: everything about segments in transit. The four peer hooks go
 * to each session as they are: functions, not methods that need their owner bound.
 */
export interface PeerPoolOwner {
  isDestroyed(): boolean;
  /** A segment arriving from a peer, relayed on as it arrives (Transfers.relay). */
  relay(sequence: number): { bytes: Uint8Array; readableBytes: number } | undefined;
  onAvailability: (peer: PeerSession, sequence: number | undefined) => void;
  onChunk: (peer: PeerSession, sequence: number, chunk: Uint8Array) => void;
  onSegment: (peer: PeerSession, sequence: number, bytes: Uint8Array) => void;
  onRefused: (peer: PeerSession, sequence: number) => void;
  /** The peer left the pool; its download, if any, is still open (`cancelDownload` it). */
  onPeerGone(peer: PeerSession, banned: boolean): void;
  /** Something changed that a plan reads. */
  replan(): void;
}

export interface PeerPoolDeps {
  streamKey: string;
  clock: Clock;
  options: EngineOptions;
  store: SegmentStore;
  governor: UploadGovernor;
  /** Peer ids banned by any stream: a peer that broke the protocol or sent bad bytes is refused everywhere. */
  banned: Set<string>;
  stats: Omit<StreamStats, 'peers'>;
  emit: EngineEmit;
  owner: PeerPoolOwner;
}

export class PeerPool {
  readonly peers = new Map<string, PeerSession>();
  /** The tracker's count of peers in the swarm (this one included), when signaling reports it. */
  swarmSize: number | undefined;
  private swarm: SwarmSignal | undefined;
  /** Set before join() returns: signaling may hand over peers synchronously. */
  private joined = false;
  private lastPeerRequestMs = -Infinity;
  /** Segments the peers were told we fetch: `fetching` said once, or twice (`relaying`, PROTOCOL.md Session 2). */
  private readonly toldFetching = new Map<number, 'once' | 'relaying'>();

  constructor(private readonly deps: PeerPoolDeps) {}

  join(signaling: Signaling | undefined): void {
    const { p2pDownload, upload, maxPeers } = this.deps.options;
    if (this.joined || !signaling || maxPeers === 0 || (!p2pDownload && !upload)) return;
    const { streamKey, emit } = this.deps;
    this.lastPeerRequestMs = this.deps.clock.now();
    this.joined = true;
    this.swarm = signaling.join(infoHash(streamKey), {
      peer: (transport) => this.add(transport),
      error: (error) => emit('tracker-error', { streamKey, error }),
      warning: (message) => emit('tracker-warning', { streamKey, message }),
      swarmSize: (peers) => {
        if (Number.isFinite(peers) && peers >= 1) this.swarmSize = peers;
      },
    });
  }

  leave(): void {
    const swarm = this.swarm;
    this.swarm = undefined;
    this.joined = false;
    swarm?.leave();
    for (const peer of [...this.peers.values()]) peer.close('left the swarm');
  }

  get size(): number {
    return this.peers.size;
  }

  any(test: (peer: PeerSession) => boolean): boolean {
    for (const peer of this.peers.values()) if (test(peer)) return true;
    return false;
  }

  /**
   * Tells every handshaken peer a segment's new state, once: a `fetching` already said is not said
   * again (peers would take the second for a relay, see announceRelaying), and `none` for a
   * download goes out only to take back a `fetching` said (evictions: evicted()). Every `have` costs each neighbour's link a packet and an SCTP
   * acknowledgement: on a home uplink, chatter the viewer's own requests wait behind.
   */
  announce(sequence: number, state: SegmentStateValue): void {
    const fetchingSaid = this.toldFetching.has(sequence);
    if (state === SegmentState.fetching ? fetchingSaid : state === SegmentState.none && !fetchingSaid) return;
    if (state === SegmentState.fetching) this.toldFetching.set(sequence, 'once');
    else this.toldFetching.delete(sequence);
    this.tell(sequence, state);
    // A stored segment's last byte may go out to peers we relayed it to.
    if (state === SegmentState.has) this.deps.governor.pump();
  }

  /** Our transfer from a peer got its first bytes: we relay it as it arrives, which peers learn from `fetching` said a second time. */
  announceRelaying(sequence: number): void {
    const said = this.toldFetching.get(sequence);
    if (said === 'relaying') return;
    if (said === undefined) this.tell(sequence, SegmentState.fetching);
    this.tell(sequence, SegmentState.fetching);
    this.toldFetching.set(sequence, 'relaying');
  }

  /** The store evicted the segment: `none`, whatever was said before (a shared store may hold segments this pool never announced). */
  evicted(sequence: number): void {
    this.toldFetching.delete(sequence);
    this.tell(sequence, SegmentState.none);
  }

  private tell(sequence: number, state: SegmentStateValue): void {
    for (const peer of this.peers.values()) if (peer.handshaken) peer.announce(sequence, state);
  }

  /** What we relayed of a segment is void (our copy failed verification): uploads of it that started end. */
  abandonRelayedUploads(sequence: number): void {
    for (const peer of this.peers.values()) peer.abandonRelayedUpload(sequence);
  }

  /** While below target, asks the trackers for more peers (at most every PEER_REQUEST_INTERVAL_MS); returns when to ask again. */
  topUp(): number {
    if (!this.swarm || this.peers.size >= this.deps.options.targetPeers) return Infinity;
    const now = this.deps.clock.now();
    // Compared as the time returned (not `now - last >= interval`): in floating point that
    // difference can fall short of the interval at the very time returned, and the tick called
    // back then would be called back at once, forever.
    if (now >= this.lastPeerRequestMs + PEER_REQUEST_INTERVAL_MS) {
      this.lastPeerRequestMs = now;
      this.swarm.requestPeers();
    }
    return this.lastPeerRequestMs + PEER_REQUEST_INTERVAL_MS;
  }

  ban(peer: PeerSession, reason: string): void {
    const { banned, emit, streamKey } = this.deps;
    if (banned.has(peer.id)) return;
    banned.add(peer.id);
    log(`banned ${peer.id}: ${reason}`);
    emit('peer-banned', { streamKey, peerId: peer.id, reason });
  }

  private add(transport: PeerTransport): void {
    const { options, banned, owner, store, streamKey } = this.deps;
    const peerId = transport.remotePeerId;
    if (owner.isDestroyed() || !this.joined || banned.has(peerId) || this.peers.has(peerId) || this.peers.size >= options.maxPeers) {
      transport.close();
      return;
    }
    const peer = new PeerSession(transport, this.deps.clock, this.hooks(), this.deps.governor, options.initialPeerThroughputBytesPerS);
    this.peers.set(peerId, peer);
    // A newcomer hears what the others were told: a request to a peer not yet answered is no news
    // (one answered busy would leave it waiting for a segment nobody fetches).
    const [firstSequence, states] = availabilityMap(store.sequences(streamKey), [...this.toldFetching.keys()]);
    peer.start(options.upload, firstSequence, states);
  }

  private hooks(): PeerSessionHooks {
    const { streamKey, store, options, owner, emit, stats, banned } = this.deps;
    return {
      onReady: (peer) => {
        emit('peer-connect', { streamKey, peerId: peer.id });
        owner.replan();
      },
      onAvailability: owner.onAvailability,
      onProgress: owner.onChunk,
      onSegment: owner.onSegment,
      onRefused: owner.onRefused,
      segmentSize: (sequence) => store.sizeOf(streamKey, sequence) ?? owner.relay(sequence)?.bytes.length,
      readableBytes: (sequence) => store.sizeOf(streamKey, sequence) ?? owner.relay(sequence)?.readableBytes,
      readSegment: (sequence, start, end) => {
        const stored = store.read(streamKey, sequence, start, end);
        if (stored) return stored;
        const relayed = owner.relay(sequence);
        return relayed && end <= relayed.readableBytes ? relayed.bytes.slice(start, end) : undefined;
      },
      uploadEnabled: () => options.upload && !owner.isDestroyed(),
      onBytesUp: (bytes) => {
        stats.uploadBytes += bytes;
        emit('bytes-up', { streamKey, bytes });
      },
      onViolation: (peer, reason) => this.ban(peer, reason),
      onClose: (peer, reason) => {
        if (this.peers.get(peer.id) !== peer) return;
        this.peers.delete(peer.id);
        owner.onPeerGone(peer, banned.has(peer.id));
        emit('peer-close', { streamKey, peerId: peer.id, reason });
        this.topUp();
        owner.replan();
      },
    };
  }
}
