import { describe, expect, it } from 'vitest';
import { PlayerError } from '../src/errors.js';
import { playerDefaults, resolvePlayerOptions } from '../src/options.js';

describe('resolvePlayerOptions', () => {
  it('fills the documented defaults', () => {
    const options = resolvePlayerOptions({ src: ' https://cdn.example/live.m3u8 ' });
    expect(options).toMatchObject({ ...playerDefaults, src: 'https://cdn.example/live.m3u8', hlsConfig: {}, engineOptions: {}, videojsOptions: {} });
  });
  it('keeps given values and passes hls.js and engine options through untouched', () => {
    const hlsConfig = { maxBufferLength: 12, liveSyncDurationCount: 4 };
    const options = resolvePlayerOptions({ src: 'a.m3u8', trackers: ['wss://t.example'], muted: true, hlsConfig, engineOptions: { maxPeers: 3 } });
    expect(options.hlsConfig).toEqual(hlsConfig);
    expect(options.engineOptions).toEqual({ maxPeers: 3 });
    expect(options.trackers).toEqual(['wss://t.example']);
    expect(options.muted).toBe(true);
  });
  it.each([
    [{ src: '' }, 'src'],
    [{ src: 'a.m3u8', trackers: ['https://t.example'] }, 'trackers'],
    [{ src: 'a.m3u8', trackers: 'wss://t.example' }, 'trackers'],
    [{ src: 'a.m3u8', autoplay: 'yes' }, 'autoplay'],
    [{ src: 'a.m3u8', hlsConfig: [] }, 'hlsConfig'],
    [{ src: 'a.m3u8', poster: 3 }, 'poster'],
  ])('rejects %j naming the field %s', (input, field) => {
    expect(() => resolvePlayerOptions(input as never)).toThrowError(PlayerError);
    expect(() => resolvePlayerOptions(input as never)).toThrowError(new RegExp(`^INVALID_OPTION: ${field}:`));
  });
});
