// One stream (a rendition of the media, one swarm) and its parts, wired together: its playlist,
// its peer pool, its transfers, the player's loads waiting on it and its live-edge seeding.
import type { EngineEmit, StreamStats } from './engine-events.js';
import type { SegmentVerifier } from './store/integrity.js';
import { LiveEdgeSeeding, newlyListed } from './plan/live-edge-seeding.js';
import type { EngineOptions } from './options.js';
import { PeerPool, type PeerPoolOwner } from './peers/peer-pool.js';
import type { OriginThroughput } from './transfers/origin-throughput.js';
import { Transfers } from './transfers/transfers.js';
import type { Clock, HttpClient, SegmentRef, SegmentStore } from './types.js';
import type { UploadGovernor } from './upload/upload-governor.js';

/** Bitrate assumed for a segment's size before any segment of its stream was measured: 2 Mbit/s. */
const DEFAULT_BYTES_PER_S = 250_000;
/**
 * Segments past the newest in our playlist a peer may say it has: its playlist may be a refresh or
 * two ahead of ours (live), never more (and a VOD playlist has them all).
 */
const FUTURE_CLAIM_MARGIN = 6;

/** What every stream shares with the engine. */
export interface StreamContext {
  clock: Clock;
  http: HttpClient;
  store: SegmentStore;
  verifier: SegmentVerifier;
  governor: UploadGovernor;
  throughput: OriginThroughput;
  options: EngineOptions;
  /** Peer ids banned by any stream. */
  banned: Set<string>;
  emit: EngineEmit;
  isDestroyed(): boolean;
  /** Whether this stream is the one the player plays. */
  isActive(streamKey: string): boolean;
  /** Something changed that a plan reads: plan again soon. */
  replan(): void;
}

export class Stream {
  isLive = false;
  refs = new Map<number, SegmentRef>();
  /** By start time, for window lookups. */
  ordered: SegmentRef[] = [];
  /** Whether a playlist was registered (a load may come first). */
  registered = false;
  /** The last sequence a playlist listed. */
  private listedUntil = -Infinity;
  /** The stream's bitrate, bytes per second of media, learnt from completed segments (guessed before). */
  bytesPerS = DEFAULT_BYTES_PER_S;
  private bitrateLearnt = false;
  /** What this stream counted (its peer count is the pool's, read by getStats). */
  readonly stats: Omit<StreamStats, 'peers'> = {
    httpBytes: 0, originBytes: { seed: 0, urgent: 0, range: 0, refetch: 0 }, p2pBytes: 0, uploadBytes: 0, controlBytes: 0, httpSegments: 0, p2pSegments: 0,
  };
  readonly pool: PeerPool;
  readonly transfers: Transfers;
  /** Who fetches new live segments from the origin. */
  readonly seeding: LiveEdgeSeeding;

  constructor(readonly key: string, context: StreamContext) {
    // The parts take what they need of the context the engine shares.
    this.pool = new PeerPool({ ...context, streamKey: key, stats: this.stats, owner: this.peerEvents(context) });
    this.transfers = new Transfers(this, context);
    this.seeding = new LiveEdgeSeeding(
      key, context.options,
      (sequence) => this.transfers.running.has(sequence) || context.store.has(key, sequence),
      (sequence, state) => this.pool.announce(sequence, state),
    );
  }

  /** A playlist (re)load; returns the segments it lists for the first time (newlyListed). */
  applyPlaylist(isLive: boolean, segments: readonly SegmentRef[]): number[] {
    this.registered = true;
    this.isLive = isLive;
    const listed = newlyListed(this.listedUntil, segments.map((ref) => ref.sequence));
    this.listedUntil = listed.listedUntil;
    const refs = new Map<number, SegmentRef>();
    for (const ref of segments) refs.set(ref.sequence, ref);
    // Keep segments that slid out of a live playlist while a transfer or a load still needs them.
    for (const [sequence, ref] of this.refs) {
      if (!refs.has(sequence) && (this.transfers.running.has(sequence) || this.transfers.waiters.has(sequence))) refs.set(sequence, ref);
    }
    this.refs = refs;
    this.ordered = [...refs.values()].sort((a, b) => a.startS - b.startS);
    this.seeding.forget((sequence) => refs.has(sequence), this.ordered[0]?.sequence ?? 0);
    this.transfers.waste.forget((sequence) => refs.has(sequence));
    return listed.fresh;
  }

  /**
   * A completed segment's bytes per second of media: the first replaces the assumed bitrate (a
   * 2 Mbit/s guess put a 684 kbit/s stream's next segments at 2.5 times their size, too big for the
   * peers that could have brought them), later ones move the average.
   */
  /** A bitrate to guess segment sizes by until the first segment arrives. */
  guessBitrate(bytesPerS: number): void {
    if (!this.bitrateLearnt && bytesPerS > 0) this.bytesPerS = bytesPerS;
  }

  learnBitrate(bytesPerS: number): void {
    this.bytesPerS = this.bitrateLearnt ? 0.8 * this.bytesPerS + 0.2 * bytesPerS : bytesPerS;
    this.bitrateLearnt = true;
  }

  /** A segment the player asks for that no playlist listed (yet). */
  addSegment(ref: SegmentRef): void {
    if (this.refs.has(ref.sequence)) return;
    this.refs.set(ref.sequence, ref);
    this.ordered = [...this.refs.values()].sort((a, b) => a.startS - b.startS);
  }

  /** What the peers say and when they come and go: for the seeding, the transfers and the plans. */
  private peerEvents(context: StreamContext): PeerPoolOwner {
    const { store, replan } = context;
    return {
      isDestroyed: context.isDestroyed,
      relay: (sequence) => this.transfers.running.get(sequence)?.relayable(),
      replan,
      onAvailability: (peer, sequence) => {
        // Nobody has a segment that is not out yet: a peer claiming one is a liar, who would keep
        // elected seeders from the origin and the others waiting for it. Live, only the playing
        // rendition's playlist is fresh (the previous one's stopped refreshing at the switch).
        const claimed = sequence === undefined ? peer.availability.newestHeld() : peer.availability.has(sequence) ? sequence : undefined;
        const newest = this.isLive && !context.isActive(this.key) ? undefined : this.ordered[this.ordered.length - 1]?.sequence;
        if (claimed !== undefined && newest !== undefined && claimed > newest + FUTURE_CLAIM_MARGIN) {
          this.pool.ban(peer, `announced segment ${claimed}, beyond the newest there is (${newest})`);
          return peer.close('announced segments that are not out yet');
        }
        if (sequence === undefined) return replan();
        if (peer.isFetching(sequence) || peer.availability.has(sequence)) {
          if (this.isLive && context.isActive(this.key)) this.seeding.relay(sequence, this.ordered[this.ordered.length - 1]?.sequence, context.clock.now());
        }
        // Only a new source of a segment we lack can change a plan now; "fetching" and withdrawals
        // are read by the next plan (an elected seeder plans again at its start time anyway).
        if (peer.mayRequest(sequence) && !store.has(this.key, sequence)) replan();
      },
      onPeerGone: (peer, banned) => this.transfers.peerGone(peer, banned),
    };
  }
}
