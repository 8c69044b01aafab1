import { describe, expect, it } from 'vitest';
import { PlayerError } from '../src/errors.js';
import { playerDefaults, pluginDefaults, resolvePlayerOptions, resolvePluginOptions } from '../src/options.js';

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
    [{ src: 'a.m3u8', iceServers: 'stun:stun.example' }, 'iceServers'],
    [{ src: 'a.m3u8', iceServers: [{ urls: 'turn:turn.example' }] }, 'iceServers'],
    [{ src: 'a.m3u8', start: -1 }, 'start'],
    [{ src: 'a.m3u8', start: '10' }, 'start'],
    [{ src: 'a.m3u8', stop: Number.NaN }, 'stop'],
    [{ src: 'a.m3u8', start: 30, stop: 30 }, 'stop'],
    [{ src: 'a.m3u8', loop: 1 }, 'loop'],
    [{ src: 'a.m3u8', controls: 'no' }, 'controls'],
    [{ src: 'a.m3u8', title: 42 }, 'title'],
    [{ src: 'a.m3u8', subtitle: 'English' }, 'subtitle'],
  ])('rejects %j naming the field %s', (input, field) => {
    expect(() => resolvePlayerOptions(input as never)).toThrowError(PlayerError);
    expect(() => resolvePlayerOptions(input as never)).toThrowError(new RegExp(`^INVALID_OPTION: ${field}:`));
  });
});

describe('the part of the stream, the title and the subtitles', () => {
  it('keeps start, stop, loop, title and subtitle, with loop off and the others absent by default', () => {
    expect(resolvePlayerOptions({ src: 'a.m3u8', start: 12.5, stop: 40, loop: true, controls: false, title: 'Launch', subtitle: 'pt-BR' })).toMatchObject({
      start: 12.5,
      stop: 40,
      loop: true,
      controls: false,
      title: 'Launch',
      subtitle: 'pt-BR',
    });
    const defaults = resolvePlayerOptions({ src: 'a.m3u8' });
    expect(defaults.loop).toBe(false);
    expect([defaults.start, defaults.stop, defaults.title, defaults.subtitle]).toEqual([undefined, undefined, undefined, undefined]);
  });
  it('says when stop does not come after start', () => {
    expect(() => resolvePlayerOptions({ src: 'a.m3u8', start: 50, stop: 20 })).toThrow(/^INVALID_OPTION: stop: 20 s is not after start \(50 s\)$/);
    expect(() => resolvePlayerOptions({ src: 'a.m3u8', stop: 0 })).toThrow(/^INVALID_OPTION: stop: 0 s is not after start \(0 s\)$/);
  });
});

describe('ICE servers', () => {
  it('leaves the engine default (public STUN) when absent, and passes [] and TURN servers through', () => {
    expect(resolvePlayerOptions({ src: 'a.m3u8' }).iceServers).toBeUndefined();
    expect(resolvePlayerOptions({ src: 'a.m3u8', iceServers: [] }).iceServers).toEqual([]);
    const turn = [{ urls: 'turns:turn.example:5349', username: 'u', credential: 'p' }];
    expect(resolvePlayerOptions({ src: 'a.m3u8', iceServers: turn }).iceServers).toEqual(turn);
  });
  it('says which entry is wrong', () => {
    expect(() => resolvePlayerOptions({ src: 'a.m3u8', iceServers: [{ urls: 'stun:a' }, { urls: 'turn:b' }] as RTCIceServer[] })).toThrow(
      /^INVALID_OPTION: iceServers: \[1\]: the TURN server turn:b needs `username` and `credential`/,
    );
  });
});

describe('resolvePluginOptions', () => {
  it('leaves the stats view and the quality menu off unless asked', () => {
    expect(resolvePluginOptions()).toMatchObject({ ...pluginDefaults, statsView: false, qualityMenu: false, hlsConfig: {}, engineOptions: {} });
    expect(resolvePluginOptions({ statsView: true }).statsView).toEqual({ open: false });
    expect(resolvePluginOptions({ statsView: { open: true } }).statsView).toEqual({ open: true });
  });
  it.each([
    [{ statsView: 'yes' }, 'statsView'],
    [{ qualityMenu: 1 }, 'qualityMenu'],
    [{ trackers: ['http://t.example'] }, 'trackers'],
    [{ iceServers: {} }, 'iceServers'],
  ])('rejects %j naming the field %s', (input, field) => {
    expect(() => resolvePluginOptions(input as never)).toThrowError(new RegExp(`^INVALID_OPTION: ${field}:`));
  });
});

describe('integrity', () => {
  it('hands the integrity manifest and requireVerifiedP2P to Shoal’s engine, over engineOptions’ own', async () => {
    const { createShoalEngine } = await import('../src/shoal-engine.js');
    const options = resolvePlayerOptions({ src: 'https://cdn.example/v.m3u8', integrity: 'https://cdn.example/manifest.json', requireVerifiedP2P: true, engineOptions: { integrityManifestUrl: 'https://other.example/m.json', maxPeers: 3 } });
    const engine = createShoalEngine({ trackers: [], iceServers: undefined, engineOptions: options.engineOptions, integrity: options.integrity, requireVerifiedP2P: options.requireVerifiedP2P });
    expect((engine as unknown as { options: Record<string, unknown> }).options).toMatchObject({ integrityManifestUrl: 'https://cdn.example/manifest.json', requireVerifiedP2P: true, maxPeers: 3 });
    expect(resolvePluginOptions({ integrity: 'https://cdn.example/manifest.json' }).integrity).toBe('https://cdn.example/manifest.json');
  });
  it('refuses an integrity value that is no URL, naming the field', () => {
    expect(() => resolvePlayerOptions({ src: 'x.m3u8', integrity: 'sha256-abc' })).toThrow(/^INVALID_OPTION: integrity: expected the URL of a SHA-256 manifest/);
    expect(() => resolvePluginOptions({ requireVerifiedP2P: 'yes' as unknown as boolean })).toThrow(/^INVALID_OPTION: requireVerifiedP2P/);
  });
});
