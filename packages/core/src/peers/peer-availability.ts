// What one peer says it has: its availability map, `have` deltas and `progress` (the bytes it holds
// of a segment it is still receiving: a relay), as the session reads them.
import { SegmentState, type SegmentStateValue } from '../wire/peer-protocol.js';

/**
 * Segments a peer may announce at once (twice the availability map's 4096). Peers say `none` on
 * eviction, so an honest map stays near its store's size; one that only grows is a flood.
 */
export const MAX_ANNOUNCED_SEGMENTS = 8192;
/** Segments a peer may relay at once (a relay's progress is kept until it says `has` or `none`). */
const MAX_RELAYED_SEGMENTS = 64;
/**
 * A `fetching` stands this long without turning into `has`: twice the life of a relay with no
 * fetch behind it (RELAY_TTL_MS, live-edge-seeding.ts), so a fetch behind one has 4 s more. A peer
 * whose claim lapsed is believed fetching nothing for LAPSED_MS: a liar claiming every new segment
 * held every elected seeder back, and was never asked for bytes, so no backoff caught it.
 */
const FETCHING_TTL_MS = 8000;
const LAPSED_MS = 60_000;

/** A relay's last progress: bytes [0, heldBytes) of totalBytes held at atMs, and the rate they grew at between its last two. */
export interface RelayProgress {
  heldBytes: number;
  totalBytes: number;
  atMs: number;
  /** Bytes/s between its last two progress messages (undefined after the first). */
  growthBytesPerS: number | undefined;
}

export class PeerAvailability {
  private readonly states = new Map<number, SegmentStateValue>();
  /** Segments it is receiving and serves as their bytes arrive (it said `progress`). */
  private readonly relaying = new Map<number, RelayProgress>();
  /** When it said `fetching` of each segment it still says so of. */
  private readonly claimedAt = new Map<number, number>();
  /** A `fetching` of its lapsed: none of its claims count before this time, nor is it a candidate to fetch for others. */
  lapsedUntilMs = 0;

  has(sequence: number): boolean {
    return this.states.get(sequence) === SegmentState.has;
  }

  isFetching(sequence: number, nowMs: number): boolean {
    if (this.relaying.has(sequence)) return true;
    // The oldest claim comes first (a Map keeps insertion order).
    const [oldest, atMs] = this.claimedAt.entries().next().value ?? [];
    if (atMs !== undefined && nowMs - atMs >= FETCHING_TTL_MS) {
      this.claimedAt.delete(oldest!);
      this.lapsedUntilMs = nowMs + LAPSED_MS;
    }
    return nowMs >= this.lapsedUntilMs && this.claimedAt.has(sequence);
  }

  /** It has the segment, or relays it as it arrives. */
  serves(sequence: number): boolean {
    return this.has(sequence) || this.relaying.has(sequence);
  }

  /** What it holds of a segment it relays, or undefined (it has the whole, or nothing). */
  relay(sequence: number): RelayProgress | undefined {
    return this.relaying.get(sequence);
  }

  /** The newest segment it says it has (undefined: none). */
  newestHeld(): number | undefined {
    let newest: number | undefined;
    for (const [sequence, state] of this.states) if (state === SegmentState.has && (newest === undefined || sequence > newest)) newest = sequence;
    return newest;
  }

  /** Its whole availability map replaces what we knew of it. */
  replace(firstSequence: number, states: readonly SegmentStateValue[], nowMs: number): void {
    this.states.clear();
    this.relaying.clear();
    this.claimedAt.clear();
    states.forEach((state, i) => this.update(firstSequence + i, state, nowMs));
  }

  /** A `have` delta; returns a violation when it announces too much at once. Any `have` ends a relay's progress. */
  update(sequence: number, state: SegmentStateValue, nowMs: number): string | undefined {
    if (state !== SegmentState.none && !this.states.has(sequence) && this.states.size >= MAX_ANNOUNCED_SEGMENTS) {
      return `announced more than ${MAX_ANNOUNCED_SEGMENTS} segments at once`;
    }
    this.relaying.delete(sequence);
    if (state !== SegmentState.fetching) this.claimedAt.delete(sequence);
    else if (!this.claimedAt.has(sequence)) this.claimedAt.set(sequence, nowMs);
    if (state === SegmentState.none) this.states.delete(sequence);
    else this.states.set(sequence, state);
    return undefined;
  }

  /** A `progress`: it relays the segment, holding its first `heldBytes`. Returns a violation when the size changed. */
  progress(sequence: number, heldBytes: number, totalBytes: number, nowMs: number): string | undefined {
    const previous = this.relaying.get(sequence);
    if (previous && previous.totalBytes !== totalBytes) return `segment ${sequence} changed size from ${previous.totalBytes} to ${totalBytes}`;
    const growthBytesPerS =
      previous && nowMs > previous.atMs && heldBytes > previous.heldBytes ? ((heldBytes - previous.heldBytes) / (nowMs - previous.atMs)) * 1000 : previous?.growthBytesPerS;
    this.relaying.set(sequence, { heldBytes, totalBytes, atMs: nowMs, growthBytesPerS });
    if (!this.states.has(sequence)) this.states.set(sequence, SegmentState.fetching);
    if (this.relaying.size > MAX_RELAYED_SEGMENTS) this.relaying.delete(this.relaying.keys().next().value!);
    return undefined;
  }

  /** It answered `absent`: not asked for the segment again before its next `have` or `progress` (and, unless it was relaying it, it has it not). */
  refused(sequence: number, relayed: boolean): void {
    this.relaying.delete(sequence);
    if (!relayed) this.states.delete(sequence);
  }
}
