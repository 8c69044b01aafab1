import { describe, expect, it } from 'vitest';
import { resolutionList } from '../src/resolutions.js';

const levels = [
  { width: 320, height: 180, bitrate: 400_000 },
  { width: 640, height: 360, bitrate: 1_000_000 },
  { width: 640, height: 360, bitrate: 1_400_000 },
];

describe('resolutionList', () => {
  it('lists "Auto" first, then the levels highest first, told apart by bitrate where heights repeat', () => {
    expect(resolutionList(levels, -1).map(({ id, label, active }) => ({ id, label, active }))).toEqual([
      { id: -1, label: 'Auto', active: true },
      { id: 2, label: '360p · 1400 kbit/s', active: false },
      { id: 1, label: '360p · 1000 kbit/s', active: false },
      { id: 0, label: '180p', active: false },
    ]);
  });
  it('marks the chosen level active instead of "Auto"', () => {
    const list = resolutionList(levels, 0);
    expect(list.filter((entry) => entry.active).map((entry) => entry.id)).toEqual([0]);
    expect(list.find((entry) => entry.id === 0)).toMatchObject({ width: 320, height: 180, bitrate: 400_000 });
  });
  it('names a level without a height by its bitrate', () => {
    expect(resolutionList([{ width: 0, height: 0, bitrate: 128_000 }], -1)[1]!.label).toBe('128 kbit/s');
  });
});
