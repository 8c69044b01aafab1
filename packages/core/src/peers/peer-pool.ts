// The peer pool of one stream's swarm: joining and leaving it through signaling, admitting peers
// (bans, maxPeers), asking trackers for more, each session's hooks, bans, and telling the peers
// what we have (`have`) and what we hold of segments still arriving (`progress`). The bytes of the
// legs we download go from each session straight to the transfers; what the pool's owner hears is
// what changes a plan: availability, peers coming and going.
import type { EngineEmit, StreamStats } from '../engine-events.js';
import { infoHash } from '../identity.js';
import { createLogger } from '../logger.js';
import type { EngineOptions } from '../options.js';
import type { Clock, PeerTransport, SegmentStore, Signaling, SwarmSignal } from '../types.js';
import type { UploadGovernor } from '../upload/upload-governor.js';
import { SegmentState, availabilityMap, type SegmentStateValue } from '../wire/peer-protocol.js';
import { PeerSession, type PeerSessionHooks } from './peer.js';

const log = createLogger('shoal:core:peer-pool');

/** How often, at most, the pool asks the trackers for more peers while below target. */
const PEER_REQUEST_INTERVAL_MS = 5000;

/** What the pool tells its stream, and reads of the segments in transit. */
export interface PeerPoolOwner {
  isDestroyed(): boolean;
  /** A segment we are receiving, relayed to peers as it arrives (Transfers.relay). */
  relay(sequence: number): { bytes: Uint8Array; readableBytes: number } | undefined;
  /** A peer's availability changed: all of it (sequence undefined) or one segment. */
  onAvailability(peer: PeerSession, sequence: number | undefined): void;
  /** The peer left the pool (`banned`: for breaking the protocol or sending bad bytes). */
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
  /** Segments the peers were told we fetch (`have` fetching, said once). */
  private readonly toldFetching = new Set<number>();
  private readonly hooks: PeerSessionHooks;

  constructor(private readonly deps: PeerPoolDeps) {
    this.hooks = this.sessionHooks();
  }

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

  any(test: (peer: PeerSession) => boolean): boolean {
    for (const peer of this.peers.values()) if (test(peer)) return true;
    return false;
  }

  /**
   * Tells every handshaken peer a segment's new state, once: `fetching` is said once, and `none`
   * for a download goes out only to take back a `fetching` said (evictions: evicted()). Every
   * message costs each neighbour's link a packet and an SCTP acknowledgement: on a home uplink,
   * chatter the viewer's own requests wait behind.
   */
  announce(sequence: number, state: SegmentStateValue): void {
    const fetchingSaid = this.toldFetching.has(sequence);
    if (state === SegmentState.fetching ? fetchingSaid : state === SegmentState.none && !fetchingSaid) return;
    if (state === SegmentState.fetching) this.toldFetching.add(sequence);
    else this.toldFetching.delete(sequence);
    for (const peer of this.peers.values()) if (peer.handshaken) peer.announce(sequence, state);
    // A stored segment's last byte may go out to peers we relayed it to.
    if (state === SegmentState.has) this.deps.governor.pump();
  }

  /** We hold bytes [0, heldBytes) of a segment still arriving: peers may ask for them (a relay). */
  progress(sequence: number, heldBytes: number, totalBytes: number): void {
    // A `none` later takes it back, as for `fetching`.
    this.toldFetching.add(sequence);
    for (const peer of this.peers.values()) if (peer.handshaken) peer.announceProgress(sequence, heldBytes, totalBytes);
  }

  /** Bytes of a segment we relay arrived: uploads waiting for them may go on. */
  relayedBytesArrived(): void {
    this.deps.governor.pump();
  }

  /** The store evicted the segment: `none`, whatever was said before (a shared store may hold segments this pool never announced). */
  evicted(sequence: number): void {
    this.toldFetching.delete(sequence);
    for (const peer of this.peers.values()) if (peer.handshaken) peer.announce(sequence, SegmentState.none);
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
    const peer = new PeerSession(transport, this.deps.clock, this.hooks, this.deps.governor, options.initialPeerThroughputBytesPerS);
    this.peers.set(peerId, peer);
    // A newcomer hears what the others were told.
    const [firstSequence, states] = availabilityMap(store.sequences(streamKey), [...this.toldFetching]);
    peer.start(options.upload, firstSequence, states);
  }

  private sessionHooks(): PeerSessionHooks {
    const { streamKey, store, options, owner, emit, stats, banned } = this.deps;
    return {
      onReady: (peer) => {
        emit('peer-connect', { streamKey, peerId: peer.id });
        owner.replan();
      },
      onAvailability: owner.onAvailability,
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
      onControlBytesUp: (bytes) => (stats.controlBytes += bytes),
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
