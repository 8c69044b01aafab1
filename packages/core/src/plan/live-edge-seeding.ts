// Live-edge seeding: who fetches a new live segment from the origin, and when. Rendezvous hashing
// elects a few origin fetchers per segment without any coordination (every peer that knows the
// same ids elects the same ones); the others get the segment from them over P2P. A neighbour's
// "fetching" is relayed one hop further so that peers beyond it hold back their own origin fetch.
import { createLogger } from '../logger.js';
import { SegmentState, type SegmentStateValue } from '../wire/peer-protocol.js';
import { nextIdleCut } from './seed-share.js';

const log = createLogger('shoal:core:seeding');

/**
 * How long a relayed "fetching" may stand without a transfer of our own behind it: the first hop
 * from a seed takes a few seconds while newcomers' players still yield (uploads paced to the link,
 * not dumped into the channel at once: 2.7 s in a 200-viewer swarm on the virtual clock), and a
 * second tier of seeds starting at 3 s fetched the first segment eight times over.
 */
const RELAY_TTL_MS = 4000;
/** An elected fetch the origin failed is tried again this often, after this long (hls.js waits 1 s): the others wait for it. */
const SEED_RETRIES = 2;
const SEED_RETRY_MS = 1000;

/** A fast 32-bit string hash (FNV-1a with a final avalanche), for rendezvous scores. */
export function hash32(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return hash >>> 0;
}

/** A peer's rendezvous score for a segment, in [0, 1): the same on every peer that computes it. */
export function seedScore(peerId: string, segmentKey: string): number {
  return hash32(`${segmentKey}\u0000${peerId}`) / 0x1_0000_0000;
}

/**
 * Live-edge seeding by rendezvous hashing: among the peer ids this peer knows in the swarm
 * (itself included), the `count` with the highest score for the segment fetch it from the
 * origin; everyone else waits for them. Every peer that knows the same ids elects the same
 * fetchers, and adding or removing one peer moves the election only if that peer was elected.
 */
export function electOriginFetchers(segmentKey: string, peerIds: readonly string[], count: number): string[] {
  return peerIds
    .map((id) => ({ id, score: seedScore(id, segmentKey) }))
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
    .slice(0, count)
    .map((entry) => entry.id);
}

/**
 * With the swarm's size known (the tracker's count), first-tier fetchers are this many times
 * `seedersPerSegment`, in expectation: enough that a segment with none (probability about
 * e^-(this * count)) is rare, few enough that the staggered start leaves time for the first
 * fetcher's "fetching" to cross the swarm and hold the others back.
 */
const SEED_QUANTILE_SLACK = 4;

/**
 * Live-edge seeding: when (delay after learning of the segment, ms) this peer fetches a new live
 * segment from the origin, or undefined when it leaves that to others. Only a peer that tops its
 * neighbourhood (electOriginFetchers over `knownPeerIds`, itself included) may fetch. Peers that
 * top their own neighbourhoods are not neighbours of each other, so with `swarmSize` known the
 * first tier is narrowed to scores in the swarm's top `count * SEED_QUANTILE_SLACK / swarmSize` of
 * the hash space (about that many peers in all, with no need to know their ids), staggered over
 * `staggerMs` by score; the other neighbourhood tops are a second tier, starting a whole stagger
 * later, for segments whose first tier is empty or gone (their start is cancelled once a
 * neighbour says it fetches or has the segment). Urgent HTTP stays the last fallback.
 */
export function seedStartDelayMs(
  selfId: string, knownPeerIds: readonly string[], segmentKey: string, count: number, swarmSize: number | undefined, staggerMs: number,
): number | undefined {
  if (!electOriginFetchers(segmentKey, knownPeerIds, count).includes(selfId)) return undefined;
  const quantile = swarmSize !== undefined ? Math.min(1, (count * SEED_QUANTILE_SLACK) / Math.max(swarmSize, 1)) : 1;
  const gap = 1 - seedScore(selfId, segmentKey);
  return gap < quantile ? (gap / quantile) * staggerMs : staggerMs + gap * staggerMs;
}

/**
 * The segments a playlist lists for the first time (those an election is held for), and the new
 * mark: the last sequence a playlist listed (-Infinity before the first). Not "new to the engine":
 * hls.js hears of a reloaded playlist before Shoal does and loads a new live-edge segment at once,
 * so the player's load often brings it first (browser swarm, live-normal: a viewer at the edge
 * never elected itself, and a segment its neighbours left to it was fetched by nobody; the whole
 * swarm took it over HTTP at its deadline). A stale reload that lists less keeps the mark; a jump
 * back by more than a playlist's length is a restart of the sequence numbers.
 */
export function newlyListed(listedUntil: number, sequences: readonly number[]): { fresh: number[]; listedUntil: number } {
  if (sequences.length === 0) return { fresh: [], listedUntil };
  const last = sequences.reduce((max, sequence) => Math.max(max, sequence), -Infinity);
  const restart = last < listedUntil - sequences.length;
  return {
    fresh: sequences.filter((sequence) => restart || sequence > listedUntil),
    listedUntil: restart ? last : Math.max(listedUntil, last),
  };
}

export interface SeedingSettings {
  upload: boolean;
  p2pDownload: boolean;
  seedersPerSegment: number;
  seedStaggerMs: number;
}

/** One stream's live-edge seeding: the segments this peer was elected to fetch, and the relays it announced. */
export class LiveEdgeSeeding {
  /**
   * Segments this peer was elected to fetch from the origin and has not started, and from when: the
   * plan reads it (a pending start is a candidate to plan); elect(), failed() and started() write it.
   */
  readonly seedAt = new Map<number, number>();
  /** Elected fetches tried again after the origin failed them, per segment. */
  private readonly retries = new Map<number, number>();
  /** Segments this peer fetches as one of the swarm's deficit share (seed-share.ts): independent copies, not held back by a neighbour's. */
  private readonly independent = new Set<number>();
  /**
   * New segments we announced as "fetching" because a neighbour fetches or has them (we will
   * fetch them from it), so that peers beyond our neighbours hold back their own origin fetch.
   * Value: when, or -1 once withdrawn.
   */
  private readonly relayed = new Map<number, number>();
  /** How far an idle uplink pulls this viewer's seed share below the rates' (seed-share.ts). */
  private idleCut = 0;
  private lastShare: number | undefined;

  constructor(
    private readonly segmentKeyPrefix: string,
    private readonly settings: SeedingSettings,
    /** Whether this peer holds the segment or runs a transfer of it. */
    private readonly holds: (sequence: number) => boolean,
    private readonly announce: (sequence: number, state: SegmentStateValue) => void,
  ) {}

  /**
   * For each new segment, elect origin fetchers among the peers we know (ourselves included); and,
   * whatever the election, fetch it at once when our rendezvous score falls in our seed share of
   * the hash space: the rates' share (`guess`, seed-share.ts) less what our idle uplink cut from it
   * (`idleShare`: the share of the uplink's time since the last election that nobody asked), and
   * never below `floor` (the share the hops to the deadline need).
   */
  elect(
    fresh: readonly number[], selfId: string | undefined, neighbourIds: readonly string[], swarmSize: number | undefined, nowMs: number,
    { guess, floor, idleShare }: { guess: number; floor: number; idleShare?: number } = { guess: 0, floor: 0 },
  ): void {
    const { upload, p2pDownload, seedersPerSegment, seedStaggerMs } = this.settings;
    if (selfId === undefined || !upload || !p2pDownload || neighbourIds.length === 0) return;
    if (idleShare !== undefined) this.idleCut = nextIdleCut(this.idleCut, idleShare, guess);
    const share = Math.max(guess - this.idleCut, floor);
    this.lastShare = share;
    const known = [selfId, ...neighbourIds];
    for (const sequence of fresh) {
      const key = `${this.segmentKeyPrefix}#${sequence}`;
      const gap = 1 - seedScore(selfId, key);
      if (gap < share) {
        // Spread over a tenth of the stagger by score, so that the origin is not asked by all at one instant.
        this.seedAt.set(sequence, nowMs + (gap / share) * seedStaggerMs * 0.1);
        this.independent.add(sequence);
        log(`#${sequence}: seed (share ${(share * 100).toFixed(0)}%)`, this.segmentKeyPrefix);
        continue;
      }
      const delayMs = seedStartDelayMs(selfId, known, key, seedersPerSegment, swarmSize, seedStaggerMs);
      if (delayMs === undefined) continue;
      this.seedAt.set(sequence, nowMs + delayMs);
      log(`#${sequence}: elected seed in ${Math.round(delayMs)} ms (${known.length} peers)`, this.segmentKeyPrefix);
    }
  }

  /** The share of new segments this viewer fetched at publication at the last election. */
  get share(): number | undefined {
    return this.lastShare;
  }

  /** The segment is in hand or its fetch started: no seeding start pending for it. */
  started(sequence: number): void {
    this.seedAt.delete(sequence);
  }

  /** Our elected fetch of the segment failed (the origin refused it): fetch it again soon, a few times. */
  failed(sequence: number, nowMs: number): void {
    const tries = this.retries.get(sequence) ?? 0;
    if (tries >= SEED_RETRIES) return;
    this.retries.set(sequence, tries + 1);
    this.seedAt.set(sequence, nowMs + SEED_RETRY_MS);
  }

  /**
   * An elected start is moot once a neighbour fetches or has the segment. "Fetching" cannot tell an
   * origin fetch from a P2P one: with seedersPerSegment > 1 (independent origin copies wanted),
   * every elected peer fetches its own.
   */
  satisfied(sequence: number, neighbourFetches: boolean, neighbourHas: () => boolean): boolean {
    if (!this.seedAt.has(sequence) || this.settings.seedersPerSegment !== 1 || this.independent.has(sequence)) return false;
    // A retry waits only for a neighbour that has it: "fetching" may be our failed fetch, relayed.
    return (!this.retries.has(sequence) && neighbourFetches) || neighbourHas();
  }

  /** Forgets elections of segments no longer in the playlist, and relays older than its oldest segment. */
  forget(inPlaylist: (sequence: number) => boolean, oldestSequence: number): void {
    for (const sequence of this.seedAt.keys()) if (!inPlaylist(sequence)) this.seedAt.delete(sequence);
    for (const sequence of this.independent) if (!inPlaylist(sequence)) this.independent.delete(sequence);
    for (const sequence of this.retries.keys()) if (!inPlaylist(sequence)) this.retries.delete(sequence);
    for (const sequence of this.relayed.keys()) if (sequence < oldestSequence) this.relayed.delete(sequence);
  }

  /**
   * Seeding beyond our neighbours: a peer knows only its direct neighbours, so where views differ,
   * several peers elect themselves for the same new segment. When a neighbour fetches (or has) a
   * segment at or past our live edge, we say "fetching" too (we will get it from that neighbour):
   * the news crosses the swarm in a few channel latencies, before any staggered self-elected
   * fetcher starts. A relay with no transfer of ours behind it is withdrawn after RELAY_TTL_MS. A
   * relay says that someone fetches, not how many: with seedersPerSegment > 1 there is none.
   */
  relay(sequence: number, edgeSequence: number | undefined, nowMs: number): void {
    const { upload, p2pDownload, seedersPerSegment } = this.settings;
    if (!upload || !p2pDownload || seedersPerSegment !== 1) return;
    if (edgeSequence === undefined || sequence < edgeSequence || this.relayed.has(sequence)) return;
    if (this.holds(sequence)) return;
    this.relayed.set(sequence, nowMs);
    this.announce(sequence, SegmentState.fetching);
  }

  /** Withdraws relays that no transfer of ours took over in time; returns when to look again. */
  expire(nowMs: number): number {
    const live = [...this.relayed].filter(([, atMs]) => atMs >= 0).map(([sequence, atMs]) => ({ sequence, atMs, held: this.holds(sequence) }));
    const { settled, withdrawn, nextMs } = relayExpiry(live, nowMs);
    for (const sequence of [...settled, ...withdrawn]) this.relayed.set(sequence, -1);
    for (const sequence of withdrawn) this.announce(sequence, SegmentState.none);
    return nextMs;
  }
}

/**
 * Relays in force (said `fetching` at `atMs`; `held`: a transfer of ours or the segment is here
 * now): which are settled (ours stands behind them), which to withdraw (RELAY_TTL_MS passed with
 * nothing behind them), and when the next one falls due.
 */
export function relayExpiry(
  relays: readonly { sequence: number; atMs: number; held: boolean }[], nowMs: number,
): { settled: number[]; withdrawn: number[]; nextMs: number } {
  const settled: number[] = [];
  const withdrawn: number[] = [];
  let nextMs = Infinity;
  for (const { sequence, atMs, held } of relays) {
    if (held) settled.push(sequence);
    else if (nowMs >= atMs + RELAY_TTL_MS) withdrawn.push(sequence);
    else nextMs = Math.min(nextMs, atMs + RELAY_TTL_MS);
  }
  return { settled, withdrawn, nextMs };
}
