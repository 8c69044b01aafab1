// The prefetch window: which segments ahead of the playhead the plan may fetch from peers before
// the player asks, bounded by time ahead and by the store's room. Pure, like the scheduler.
import type { SegmentRef } from '../types.js';

/** Share of the store that prefetching may fill ahead of the playhead: a window the store cannot hold would be evicted and fetched again. */
export const PREFETCH_STORE_SHARE = 0.5;

/** Index of the first segment (of segments ordered by start time) that ends after `positionS`. */
export function firstEndingAfter(ordered: readonly SegmentRef[], positionS: number): number {
  let low = 0;
  let high = ordered.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    const ref = ordered[middle]!;
    if (ref.startS + ref.durationS <= positionS) low = middle + 1;
    else high = middle;
  }
  return low;
}

/**
 * Prefetch over P2P: the segments from the playhead on that start within `aheadS`, as long as
 * their sizes (`sizeBytes`) fit in `budgetBytes` (a share of the store).
 */
export function prefetchWindow(
  ordered: readonly SegmentRef[], positionS: number, aheadS: number, budgetBytes: number, sizeBytes: (ref: SegmentRef) => number,
): SegmentRef[] {
  const untilS = positionS + aheadS;
  const picked: SegmentRef[] = [];
  let leftBytes = budgetBytes;
  for (let i = firstEndingAfter(ordered, positionS); i < ordered.length; i++) {
    const ref = ordered[i]!;
    leftBytes -= sizeBytes(ref);
    if (ref.startS >= untilS || leftBytes < 0) break;
    picked.push(ref);
  }
  return picked;
}
