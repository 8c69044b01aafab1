// A SegmentStore for the simulator: the same contract and eviction order as core's
// MemorySegmentStore (bounded in bytes; behind the playhead first, oldest first, then furthest
// ahead), but it keeps only each segment's size and hands out views of the origin's one shared
// copy of the segment. A thousand peers holding copies would need tens of gigabytes; the bytes
// themselves do not change any decision the engine makes.
import type { SegmentRef, SegmentStore } from '@shoal/core';
import { pickEvictionVictim } from '@shoal/core/testing';

interface Entry {
  size: number;
  startS: number;
  endS: number;
}

export class SimSegmentStore implements SegmentStore {
  private readonly streams = new Map<string, Map<number, Entry>>();
  private readonly sorted = new Map<string, number[]>();
  private readonly playheads = new Map<string, number>();
  private readonly listeners: ((streamKey: string, sequence: number) => void)[] = [];
  private used = 0;
  /** The engine asks about one stream many times per plan: skip the outer map lookup. */
  private lastKey: string | undefined;
  private lastSegments: Map<number, Entry> | undefined;

  constructor(
    readonly bytesLimit: number,
    private readonly contentOf: (streamKey: string, sequence: number) => Uint8Array,
  ) {}

  get bytesUsed(): number {
    return this.used;
  }

  private segmentsOf(streamKey: string): Map<number, Entry> | undefined {
    if (streamKey !== this.lastKey) {
      this.lastKey = streamKey;
      this.lastSegments = this.streams.get(streamKey);
    }
    return this.lastSegments;
  }

  has(streamKey: string, sequence: number): boolean {
    return this.segmentsOf(streamKey)?.has(sequence) ?? false;
  }

  sizeOf(streamKey: string, sequence: number): number | undefined {
    return this.segmentsOf(streamKey)?.get(sequence)?.size;
  }

  get(streamKey: string, sequence: number): Uint8Array | undefined {
    const entry = this.streams.get(streamKey)?.get(sequence);
    return entry && this.contentOf(streamKey, sequence).subarray(0, entry.size);
  }

  read(streamKey: string, sequence: number, start: number, end: number): Uint8Array | undefined {
    const entry = this.streams.get(streamKey)?.get(sequence);
    if (!entry || start < 0 || end > entry.size || start > end) return undefined;
    return this.contentOf(streamKey, sequence).subarray(start, end);
  }

  put(ref: SegmentRef, bytes: Uint8Array): boolean {
    if (bytes.length > this.bytesLimit) return false;
    let segments = this.streams.get(ref.streamKey);
    if (!segments) {
      this.streams.set(ref.streamKey, (segments = new Map()));
      this.lastKey = undefined;
    }
    const previous = segments.get(ref.sequence);
    if (previous) this.used -= previous.size;
    else insertSorted(this.sortedOf(ref.streamKey), ref.sequence);
    segments.set(ref.sequence, { size: bytes.length, startS: ref.startS, endS: ref.startS + ref.durationS });
    this.used += bytes.length;
    this.evictOverLimit(ref.streamKey, ref.sequence);
    return this.has(ref.streamKey, ref.sequence);
  }

  setPlayhead(streamKey: string, positionS: number): void {
    this.playheads.set(streamKey, positionS);
    if (this.used > this.bytesLimit) this.evictOverLimit();
  }

  sequences(streamKey: string): number[] {
    return [...this.sortedOf(streamKey)];
  }

  onEvict(listener: (streamKey: string, sequence: number) => void): void {
    this.listeners.push(listener);
  }

  clear(): void {
    for (const [streamKey, segments] of [...this.streams]) for (const sequence of [...segments.keys()]) this.drop(streamKey, sequence);
    this.streams.clear();
    this.sorted.clear();
    this.lastKey = undefined;
  }

  private sortedOf(streamKey: string): number[] {
    let list = this.sorted.get(streamKey);
    if (!list) this.sorted.set(streamKey, (list = []));
    return list;
  }

  private drop(streamKey: string, sequence: number): void {
    const segments = this.streams.get(streamKey);
    const entry = segments?.get(sequence);
    if (!segments || !entry) return;
    segments.delete(sequence);
    if (segments.size === 0) {
      this.streams.delete(streamKey);
      this.sorted.delete(streamKey);
      this.lastKey = undefined;
      return this.dropped(streamKey, sequence, entry.size);
    }
    const list = this.sortedOf(streamKey);
    const index = list.indexOf(sequence);
    if (index !== -1) list.splice(index, 1);
    this.dropped(streamKey, sequence, entry.size);
  }

  private dropped(streamKey: string, sequence: number, size: number): void {
    this.used -= size;
    for (const listener of this.listeners) listener(streamKey, sequence);
  }

  private evictOverLimit(newStreamKey?: string, newSequence?: number): void {
    while (this.used > this.bytesLimit) {
      const victim = pickEvictionVictim(this.streams, this.playheads);
      if (!victim) return;
      this.drop(victim[0], victim[1]);
      if (victim[0] === newStreamKey && victim[1] === newSequence) return;
    }
  }
}

function insertSorted(list: number[], value: number): void {
  let index = list.length;
  while (index > 0 && list[index - 1]! > value) index--;
  list.splice(index, 0, value);
}
