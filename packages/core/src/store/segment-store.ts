// The default SegmentStore: memory, bounded in bytes. When over the limit it drops segments
// behind the playhead first (oldest first), then the ones furthest ahead of it.
import type { SegmentRef, SegmentStore } from '../types.js';

interface StoredSegment {
  size: number;
  /** What keep() kept: the store's own copy (undefined where a subclass keeps the size only). */
  bytes: Uint8Array | undefined;
  startS: number;
  endS: number;
}

export class MemorySegmentStore implements SegmentStore {
  private readonly streams = new Map<string, Map<number, StoredSegment>>();
  private readonly playheads = new Map<string, number>();
  private readonly evictListeners: ((streamKey: string, sequence: number) => void)[] = [];
  private used = 0;

  constructor(readonly bytesLimit: number) {}

  get bytesUsed(): number {
    return this.used;
  }

  has(streamKey: string, sequence: number): boolean {
    return this.streams.get(streamKey)?.has(sequence) ?? false;
  }

  sizeOf(streamKey: string, sequence: number): number | undefined {
    return this.streams.get(streamKey)?.get(sequence)?.size;
  }

  get(streamKey: string, sequence: number): Uint8Array | undefined {
    const stored = this.streams.get(streamKey)?.get(sequence);
    return stored && this.copy(streamKey, sequence, stored.bytes, 0, stored.size);
  }

  read(streamKey: string, sequence: number, start: number, end: number): Uint8Array | undefined {
    const stored = this.streams.get(streamKey)?.get(sequence);
    if (!stored || start < 0 || end > stored.size || start > end) return undefined;
    return this.copy(streamKey, sequence, stored.bytes, start, end);
  }

  put(ref: SegmentRef, bytes: Uint8Array): boolean {
    if (bytes.length > this.bytesLimit) return false;
    let segments = this.streams.get(ref.streamKey);
    if (!segments) this.streams.set(ref.streamKey, (segments = new Map()));
    const previous = segments.get(ref.sequence);
    if (previous) this.used -= previous.size;
    segments.set(ref.sequence, { size: bytes.length, bytes: this.keep(bytes), startS: ref.startS, endS: ref.startS + ref.durationS });
    this.used += bytes.length;
    this.evictOverLimit(ref.streamKey, ref.sequence);
    return this.has(ref.streamKey, ref.sequence);
  }

  setPlayhead(streamKey: string, positionS: number): void {
    this.playheads.set(streamKey, positionS);
    this.evictOverLimit();
  }

  sequences(streamKey: string): number[] {
    return [...(this.streams.get(streamKey)?.keys() ?? [])].sort((a, b) => a - b);
  }

  onEvict(listener: (streamKey: string, sequence: number) => void): void {
    this.evictListeners.push(listener);
  }

  clear(): void {
    for (const [streamKey, segments] of this.streams) {
      for (const sequence of segments.keys()) this.drop(streamKey, sequence);
    }
    this.streams.clear();
  }

  private drop(streamKey: string, sequence: number): void {
    const segments = this.streams.get(streamKey);
    const stored = segments?.get(sequence);
    if (!segments || !stored) return;
    segments.delete(sequence);
    if (segments.size === 0) this.streams.delete(streamKey);
    this.used -= stored.size;
    for (const listener of this.evictListeners) listener(streamKey, sequence);
  }

  /** What the store keeps of bytes put into it: its own copy, never the caller's buffer, which the player may detach. */
  protected keep(bytes: Uint8Array): Uint8Array | undefined {
    return bytes.slice();
  }

  /** Bytes [start, end) of a stored segment, as a copy the caller owns. */
  protected copy(_streamKey: string, _sequence: number, kept: Uint8Array | undefined, start: number, end: number): Uint8Array {
    return kept!.slice(start, end);
  }

  private evictOverLimit(newStreamKey?: string, newSequence?: number): void {
    while (this.used > this.bytesLimit) {
      const victim = evictionVictim(this.streams, this.playheads);
      if (!victim) return;
      this.drop(victim[0], victim[1]);
      if (victim[0] === newStreamKey && victim[1] === newSequence) return;
    }
  }
}

/**
 * The stored segment to evict first: behind its stream's playhead first (oldest first), then the
 * one furthest ahead. Without a known playhead, everything counts as behind it: oldest goes first.
 */
function evictionVictim(
  streams: ReadonlyMap<string, ReadonlyMap<number, { startS: number; endS: number }>>,
  playheads: ReadonlyMap<string, number>,
): [streamKey: string, sequence: number] | undefined {
  let victim: [string, number] | undefined;
  let victimRank = -Infinity;
  for (const [streamKey, segments] of streams) {
    const playhead = playheads.get(streamKey);
    for (const [sequence, stored] of segments) {
      const rank =
        playhead === undefined ? 1e12 - stored.startS
        : stored.endS <= playhead ? 1e12 + (playhead - stored.endS)
        : stored.startS - playhead;
      if (rank > victimRank) {
        victimRank = rank;
        victim = [streamKey, sequence];
      }
    }
  }
  return victim;
}
