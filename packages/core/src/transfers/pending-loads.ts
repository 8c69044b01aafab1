// Pending loads: the player's waiters, by segment, for one stream. A load waits here until a
// transfer completes (or fails), the store holds the segment, it is aborted, or the engine dies.
import type { SegmentRef, SegmentSource } from '../types.js';

export interface LoadTiming {
  /** When loadSegment was called (engine clock, ms). */
  requestMs: number;
  /** When the first byte for this load arrived (never before requestMs). */
  firstByteMs: number;
  doneMs: number;
  /**
   * The one origin request that delivered the whole segment, when one did (absent when peers or the
   * store supplied any of it). It may have started before requestMs (live-edge seeding) or after it
   * (the engine waited for peers first): a player's ABR should time the origin from this request.
   */
  origin?: { requestMs: number; firstByteMs: number };
}

export interface LoadResult {
  /** A fresh copy: the caller owns it and may transfer it. */
  bytes: Uint8Array;
  /** `store`: the segment was complete before the player asked (prefetched or seeded). */
  source: SegmentSource;
  timing: LoadTiming;
}

export interface SegmentLoad {
  result: Promise<LoadResult>;
  /** Rejects `result` with ABORTED; stops an HTTP transfer nobody else waits for. */
  abort(): void;
}

export interface Waiter {
  ref: SegmentRef;
  requestMs: number;
  resolve(result: LoadResult): void;
  reject(error: Error): void;
}

/**
 * One stream's waiting loads, by segment sequence, in the order they were asked for: the plan reads
 * it as the map it is (has, size, keys); loads come and go through add, settle and remove.
 */
export class PendingLoads extends Map<number, Waiter[]> {
  /** A new waiter for `ref`, and the promise its load resolves. */
  add(ref: SegmentRef, requestMs: number): { waiter: Waiter; result: Promise<LoadResult> } {
    let waiter!: Waiter;
    const result = new Promise<LoadResult>((resolve, reject) => {
      waiter = { ref, requestMs, resolve, reject };
    });
    const waiters = this.get(ref.sequence) ?? [];
    waiters.push(waiter);
    this.set(ref.sequence, waiters);
    return { waiter, result };
  }

  /** Hands every waiter of `sequence` to `each`, once: they are no longer pending. */
  settle(sequence: number, each: (waiter: Waiter) => void): void {
    const waiters = this.get(sequence);
    this.delete(sequence);
    for (const waiter of waiters ?? []) each(waiter);
  }

  /**
   * Takes one waiter out. Returns whether it was pending and `last`: whether no other load
   * waits for its segment now.
   */
  remove(waiter: Waiter): { removed: boolean; last: boolean } {
    const sequence = waiter.ref.sequence;
    const waiters = this.get(sequence);
    const index = waiters?.indexOf(waiter) ?? -1;
    if (!waiters || index === -1) return { removed: false, last: false };
    waiters.splice(index, 1);
    if (waiters.length > 0) return { removed: true, last: false };
    this.delete(sequence);
    return { removed: true, last: true };
  }

  rejectAll(error: Error): void {
    for (const waiters of this.values()) for (const waiter of waiters) waiter.reject(error);
    this.clear();
  }
}
