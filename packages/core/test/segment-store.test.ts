import { describe, expect, it } from 'vitest';
import { MemorySegmentStore } from '../src/store/segment-store.js';
import type { SegmentRef } from '../src/types.js';

const ref = (sequence: number, streamKey = 's'): SegmentRef => ({ streamKey, sequence, url: `/seg${sequence}.ts`, startS: sequence * 2, durationS: 2 });
const bytes = (length: number, fill: number) => new Uint8Array(length).fill(fill);

describe('segment store', () => {
  it('never exceeds its byte limit, evicting behind the playhead first', () => {
    const store = new MemorySegmentStore(1000);
    const evicted: number[] = [];
    store.onEvict((_, sequence) => evicted.push(sequence));
    for (let sequence = 0; sequence < 5; sequence++) store.put(ref(sequence), bytes(200, sequence));
    expect(store.bytesUsed).toBe(1000);
    store.setPlayhead('s', 5); // segments 0 and 1 (ending at 2 s and 4 s) are behind
    store.put(ref(5), bytes(300, 5));
    expect(store.bytesUsed).toBeLessThanOrEqual(1000);
    expect(evicted).toEqual([0, 1]);
    expect(store.sequences('s')).toEqual([2, 3, 4, 5]);
  });

  it('drops the segment furthest ahead when nothing is behind the playhead', () => {
    const store = new MemorySegmentStore(600);
    store.setPlayhead('s', 0);
    for (const sequence of [0, 1, 9]) store.put(ref(sequence), bytes(200, sequence));
    expect(store.put(ref(2), bytes(200, 2))).toBe(true);
    expect(store.sequences('s')).toEqual([0, 1, 2]);
    expect(store.put(ref(20), bytes(200, 20))).toBe(false);
    expect(store.sequences('s')).toEqual([0, 1, 2]);
  });

  it('refuses a segment larger than the whole store', () => {
    const store = new MemorySegmentStore(100);
    expect(store.put(ref(0), bytes(101, 1))).toBe(false);
    expect(store.bytesUsed).toBe(0);
  });

  it('keeps its own copy and hands out copies, so a detached player buffer cannot empty it', () => {
    const store = new MemorySegmentStore(10_000);
    const given = bytes(100, 7);
    store.put(ref(1), given);
    structuredClone(given.buffer, { transfer: [given.buffer] }); // what a transfer to a worker does
    expect(given.byteLength).toBe(0);
    const first = store.get('s', 1)!;
    expect(first).toEqual(bytes(100, 7));
    structuredClone(first.buffer, { transfer: [first.buffer] });
    expect(store.get('s', 1)).toEqual(bytes(100, 7));
    expect(store.read('s', 1, 10, 20)).toEqual(bytes(10, 7));
    expect(store.read('s', 1, 90, 101)).toBeUndefined();
  });

  it('replaces a segment stored twice without counting it twice', () => {
    const store = new MemorySegmentStore(1000);
    store.put(ref(1), bytes(100, 1));
    store.put(ref(1), bytes(150, 2));
    expect(store.bytesUsed).toBe(150);
    store.clear();
    expect(store.bytesUsed).toBe(0);
    expect(store.has('s', 1)).toBe(false);
  });
});
