// What one peer says it has: its availability map and `have` deltas, as the session reads them.
import { SegmentState, type SegmentStateValue } from '../wire/peer-protocol.js';

/**
 * Segments a peer may announce at once (twice the availability map's 4096). Peers say `none` on
 * eviction, so an honest map stays near its store's size; one that only grows is a flood.
 */
export const MAX_ANNOUNCED_SEGMENTS = 8192;

export class PeerAvailability {
  private readonly states = new Map<number, SegmentStateValue>();
  /**
   * Segments it is fetching and can relay: it announced `fetching` a second time (a relay does so
   * once its first bytes arrive; see PROTOCOL.md). Only these of its `fetching` segments are asked for.
   */
  private readonly relaying = new Set<number>();

  has(sequence: number): boolean {
    return this.states.get(sequence) === SegmentState.has;
  }

  isFetching(sequence: number): boolean {
    return this.states.get(sequence) === SegmentState.fetching;
  }

  /** It has the segment, or relays it as it arrives. */
  serves(sequence: number): boolean {
    return this.has(sequence) || this.relaying.has(sequence);
  }

  /** The newest segment it says it has (undefined: none). */
  newestHeld(): number | undefined {
    let newest: number | undefined;
    for (const [sequence, state] of this.states) if (state === SegmentState.has && (newest === undefined || sequence > newest)) newest = sequence;
    return newest;
  }

  /** Its whole availability map replaces what we knew of it. */
  replace(firstSequence: number, states: readonly SegmentStateValue[]): void {
    this.states.clear();
    this.relaying.clear();
    states.forEach((state, i) => {
      if (state !== SegmentState.none) this.states.set(firstSequence + i, state);
    });
  }

  /** A `have` delta; returns a violation when it announces too much at once. */
  update(sequence: number, state: SegmentStateValue): string | undefined {
    if (state !== SegmentState.none && !this.states.has(sequence) && this.states.size >= MAX_ANNOUNCED_SEGMENTS) {
      return `announced more than ${MAX_ANNOUNCED_SEGMENTS} segments at once`;
    }
    if (state === SegmentState.fetching && this.isFetching(sequence)) this.relaying.add(sequence);
    else this.relaying.delete(sequence);
    if (this.relaying.size > 64) this.relaying.delete(this.relaying.values().next().value!);
    if (state === SegmentState.none) this.states.delete(sequence);
    else this.states.set(sequence, state);
    return undefined;
  }

  /** It answered `absent`: not asked for the segment again before its next `have` (and, unless it was relaying it, it has it not). */
  refused(sequence: number, relayed: boolean): void {
    this.relaying.delete(sequence);
    if (!relayed) this.states.delete(sequence);
  }
}
