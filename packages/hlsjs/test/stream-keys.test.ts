import { infoHash, streamKey } from '@shoal/core';
import { describe, expect, it } from 'vitest';
import { levelStreamKeys, renditionOf } from '../src/stream-keys.js';

const SWARM = 'https://origin.test/live/master.m3u8';
const low = { attrs: { BANDWIDTH: '800000', RESOLUTION: '640x360', CODECS: 'avc1.4d401e,mp4a.40.2', AUDIO: 'aac' }, bitrate: 800_000 };
const high = { attrs: { BANDWIDTH: '2500000', RESOLUTION: '1280x720', CODECS: 'avc1.4d401f,mp4a.40.2', AUDIO: 'aac', NAME: '720p' } };

describe('stream keys from hls.js levels', () => {
  it('gives a rendition the same key whatever its position in the master playlist', () => {
    const [lowFirst, highSecond] = levelStreamKeys(SWARM, [low, high]);
    const [highFirst, lowSecond] = levelStreamKeys(SWARM, [high, low]);
    expect(lowFirst).toBe(lowSecond);
    expect(highSecond).toBe(highFirst);
    expect(lowFirst).not.toBe(highSecond);
    expect(infoHash(lowFirst!)).toHaveLength(20);
  });

  it('reads the master playlist attributes: bandwidth, resolution, codecs, audio group, name', () => {
    expect(renditionOf(high)).toEqual({
      bandwidth: 2_500_000, resolution: '1280x720', codecs: 'avc1.4d401f,mp4a.40.2', audioGroup: 'aac', name: '720p',
    });
    expect(levelStreamKeys(SWARM, [high])[0]).toBe(
      streamKey(SWARM, { bandwidth: 2_500_000, resolution: '1280x720', codecs: 'avc1.4d401f,mp4a.40.2', audioGroup: 'aac', name: '720p' }),
    );
  });

  it('falls back to the parsed level fields when attributes are missing', () => {
    expect(renditionOf({ bitrate: 1_000_000, width: 854, height: 480, videoCodec: 'avc1.64001e', audioCodec: 'mp4a.40.2' })).toEqual({
      bandwidth: 1_000_000, resolution: '854x480', codecs: 'avc1.64001e,mp4a.40.2',
    });
    // A media playlist loaded without a master: one level with nothing to tell, keyed by the swarm alone.
    expect(renditionOf({ attrs: {} })).toEqual({});
  });

  it('separates swarms of different streams with identical renditions', () => {
    const [a] = levelStreamKeys('https://origin.test/a.m3u8', [low]);
    const [b] = levelStreamKeys('https://origin.test/b.m3u8', [low]);
    expect(a).not.toBe(b);
  });
});
