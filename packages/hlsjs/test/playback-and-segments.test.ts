import { describe, expect, it } from 'vitest';
import { bufferedUntil, playbackState } from '../src/playback-state.js';
import { segmentRef, segmentRefs } from '../src/playlist-segments.js';

const ranges = (...pairs: [number, number][]) => ({
  length: pairs.length,
  start: (i: number) => pairs[i]![0],
  end: (i: number) => pairs[i]![1],
});

describe('playback state for the engine (deadlines)', () => {
  it('takes the end of the buffered range that holds the playhead, across holes hls.js jumps', () => {
    expect(bufferedUntil(ranges([0, 10], [10.05, 14], [20, 30]), 5)).toBe(14);
    expect(bufferedUntil(ranges([0, 10], [12, 14]), 5)).toBe(10);
    expect(bufferedUntil(ranges([20, 30]), 5)).toBe(5);
    expect(bufferedUntil(ranges(), 5)).toBe(5);
  });

  it('reports rate 0 while paused, and the live edge and target latency only for live', () => {
    const base = { currentTime: 50, playbackRate: 1.5, buffered: ranges([40, 58]), liveEdgeS: 70, targetLatencyS: 6 };
    expect(playbackState({ ...base, paused: true, isLive: true })).toEqual({
      positionS: 50, rate: 0, bufferedUntilS: 58, isLive: true, liveEdgeS: 70, targetLatencyS: 6,
    });
    expect(playbackState({ ...base, paused: false, isLive: false })).toEqual({ positionS: 50, rate: 1.5, bufferedUntilS: 58, isLive: false });
  });
});

describe('segment references from a parsed playlist', () => {
  it('keys segments by media sequence number with their timeline position, skipping the init segment', () => {
    const refs = segmentRefs('key', [
      { sn: 'initSegment', url: 'https://o.test/init.mp4', start: 0, duration: 0 },
      { sn: 100, url: 'https://o.test/100.ts', start: 200, duration: 2 },
      { sn: 101, url: 'https://o.test/101.ts', start: 202, duration: 2.002 },
    ]);
    expect(refs).toEqual([
      { streamKey: 'key', sequence: 100, url: 'https://o.test/100.ts', startS: 200, durationS: 2 },
      { streamKey: 'key', sequence: 101, url: 'https://o.test/101.ts', startS: 202, durationS: 2.002 },
    ]);
  });

  it('keeps EXT-X-BYTERANGE offsets, end exclusive', () => {
    const ref = segmentRef('key', { sn: 7, url: 'https://o.test/all.ts', start: 14, duration: 2, byteRangeStartOffset: 1000, byteRangeEndOffset: 5000 });
    expect(ref?.byteRange).toEqual({ start: 1000, end: 5000 });
  });
});
