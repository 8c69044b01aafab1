import { describe, expect, it } from 'vitest';
import { embedSnippets, optionsFromAttributes, optionsFromQuery, parseFlag, parseTime } from '../src/embed-attributes.js';

const element = (attributes: Record<string, string>) => ({ getAttribute: (name: string) => attributes[name] ?? null });

/** Reads one double-quoted attribute back as an HTML parser would (the snippets escape &, " and <). */
class DOMParserLike {
  constructor(private readonly html: string) {}
  attribute(name: string): string {
    const raw = new RegExp(`${name}="([^"]*)"`).exec(this.html)?.[1] ?? '';
    return raw.replaceAll('&quot;', '"').replaceAll('&lt;', '<').replaceAll('&amp;', '&');
  }
}

describe('embed settings', () => {
  it('reads a div’s data-attributes', () => {
    const options = optionsFromAttributes(
      element({
        'data-shoal-src': 'https://cdn.example/live.m3u8',
        'data-shoal-tracker': 'wss://a.example, wss://b.example',
        'data-shoal-autoplay': '',
        'data-shoal-muted': 'true',
        'data-shoal-poster': 'https://cdn.example/poster.jpg',
        'data-shoal-p2p': 'off',
      }),
    );
    expect(options).toEqual({
      iceServers: undefined,
      src: 'https://cdn.example/live.m3u8',
      trackers: ['wss://a.example', 'wss://b.example'],
      autoplay: true,
      muted: true,
      poster: 'https://cdn.example/poster.jpg',
      p2p: false,
      statsOpen: undefined,
      start: undefined,
      stop: undefined,
      loop: undefined,
      controls: undefined,
      title: undefined,
      subtitle: undefined,
      integrity: undefined,
      requireVerifiedP2P: undefined,
    });
  });
  it('reads the integrity manifest from data-shoal-integrity and embed.html’s integrity parameter, and requireVerified from both', () => {
    const manifest = 'https://cdn.example/vod/manifest.json';
    expect(optionsFromAttributes(element({ 'data-shoal-src': 'x.m3u8', 'data-shoal-integrity': manifest, 'data-shoal-require-verified': '' }))).toMatchObject({ integrity: manifest, requireVerifiedP2P: true });
    expect(optionsFromQuery(new URLSearchParams({ src: 'x.m3u8', integrity: manifest, requireVerified: '1' }))).toMatchObject({ integrity: manifest, requireVerifiedP2P: true });
  });
  it('leaves absent attributes to the defaults', () => {
    expect(optionsFromAttributes(element({ 'data-shoal-src': 'x.m3u8' }))).toMatchObject({ autoplay: undefined, muted: undefined, p2p: undefined, trackers: undefined });
  });
  it('reads embed.html’s query, with repeated or comma-separated trackers', () => {
    const query = new URLSearchParams('src=https%3A%2F%2Fcdn.example%2Fv.m3u8&tracker=wss%3A%2F%2Fa&tracker=wss%3A%2F%2Fb,wss%3A%2F%2Fc&autoplay=1&muted=1&p2p=0&stats=1');
    expect(optionsFromQuery(query)).toMatchObject({ src: 'https://cdn.example/v.m3u8', trackers: ['wss://a', 'wss://b', 'wss://c'], autoplay: true, muted: true, p2p: false, statsOpen: true });
  });
  it('reads ICE servers as JSON from data-shoal-ice-servers and the iceServers parameter, [] included', () => {
    const turn = [{ urls: 'turn:turn.example:3478', username: 'u', credential: 'p' }];
    expect(optionsFromAttributes(element({ 'data-shoal-src': 'x.m3u8', 'data-shoal-ice-servers': JSON.stringify(turn) })).iceServers).toEqual(turn);
    expect(optionsFromAttributes(element({ 'data-shoal-src': 'x.m3u8', 'data-shoal-ice-servers': '[]' })).iceServers).toEqual([]);
    expect(optionsFromQuery(new URLSearchParams({ src: 'x.m3u8', iceServers: JSON.stringify(turn) })).iceServers).toEqual(turn);
  });
  it('names the attribute when its ICE servers are not JSON', () => {
    expect(() => optionsFromAttributes(element({ 'data-shoal-src': 'x.m3u8', 'data-shoal-ice-servers': 'stun:stun.example' }))).toThrow(
      /^INVALID_OPTION: data-shoal-ice-servers: expected a JSON array of ICE servers/,
    );
    expect(() => optionsFromQuery(new URLSearchParams({ src: 'x.m3u8', iceServers: '[{' }))).toThrow(/^INVALID_OPTION: iceServers \(embed\.html parameter\)/);
  });
  it('reads start, stop, loop, controls, title and subtitle from the query and from data-attributes', () => {
    const query = new URLSearchParams('src=v.m3u8&start=1m30s&stop=2:05&loop=1&controls=0&title=Launch%20day%20%E2%80%94%20live&subtitle=fr');
    expect(optionsFromQuery(query)).toMatchObject({ start: 90, stop: 125, loop: true, controls: false, title: 'Launch day — live', subtitle: 'fr' });
    const div = element({
      'data-shoal-src': 'v.m3u8',
      'data-shoal-start': '12.5',
      'data-shoal-stop': '45s',
      'data-shoal-loop': '',
      'data-shoal-controls': 'off',
      'data-shoal-title': '  Launch  ',
      'data-shoal-subtitle': 'en',
    });
    expect(optionsFromAttributes(div)).toMatchObject({ start: 12.5, stop: 45, loop: true, controls: false, title: 'Launch', subtitle: 'en' });
    // Empty text is no title, no subtitle.
    expect(optionsFromQuery(new URLSearchParams('src=v.m3u8&title=&subtitle='))).toMatchObject({ title: undefined, subtitle: undefined });
  });
  it.each([
    ['90', 90],
    ['12.5', 12.5],
    ['0', 0],
    ['45s', 45],
    ['2m', 120],
    ['1m30s', 90],
    ['1h2m3s', 3723],
    ['1H2M3.5S', 3723.5],
    ['1:30', 90],
    ['1:02:03', 3723],
    [' 3m4s ', 184],
  ])('reads the time %j as %d seconds', (text, seconds) => {
    expect(parseTime(text, 'start')).toBe(seconds);
  });
  it.each(['', 'soon', '-5', '1m-3s', '1:2', '1:75:00x', '3m4', 's', '1,5'])('refuses the time %j, naming the parameter', (text) => {
    expect(() => parseTime(text, 'start (embed.html parameter)')).toThrow(
      new RegExp(`^INVALID_OPTION: start \\(embed\\.html parameter\\): expected seconds \\(90\\), a duration \\(1m30s\\) or a clock time \\(1:30\\), got ${JSON.stringify(text).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`),
    );
  });
  it('leaves an absent time to the default and names a bad one by its attribute', () => {
    expect(parseTime(null, 'start')).toBeUndefined();
    expect(() => optionsFromAttributes(element({ 'data-shoal-src': 'v.m3u8', 'data-shoal-stop': 'end' }))).toThrow(/^INVALID_OPTION: data-shoal-stop: /);
  });
  it('parses flags strictly: unknown words are not true', () => {
    expect([parseFlag(''), parseFlag('1'), parseFlag('On'), parseFlag('0'), parseFlag('no'), parseFlag('maybe'), parseFlag(null)]).toEqual([true, true, true, false, false, undefined, undefined]);
  });
  it('generates both snippets, escaped, that read back to the same settings', () => {
    const snippets = embedSnippets({
      src: 'https://cdn.example/live.m3u8?token=a&b="c"',
      trackers: ['wss://t.example/announce'],
      scriptUrl: 'https://cdn.example/shoal-player.min.js',
      frameUrl: 'https://cdn.example/embed.html',
      autoplay: true,
      muted: true,
    });
    expect(snippets.script).toContain('<script src="https://cdn.example/shoal-player.min.js" defer></script>');
    expect(snippets.script).toContain('data-shoal-src="https://cdn.example/live.m3u8?token=a&amp;b=&quot;c&quot;"');
    expect(snippets.script).toContain('data-shoal-autoplay data-shoal-muted');
    expect(snippets.iframe).toMatch(/ title="Video player" /);
    expect(snippets.iframe).toContain('allow="autoplay; fullscreen; picture-in-picture"');
    const frameSrc = /src="([^"]+)"/.exec(snippets.iframe)![1]!.replaceAll('&amp;', '&');
    expect(optionsFromQuery(new URL(frameSrc).searchParams)).toMatchObject({
      src: 'https://cdn.example/live.m3u8?token=a&b="c"',
      trackers: ['wss://t.example/announce'],
      iceServers: undefined,
      autoplay: true,
      muted: true,
      p2p: true,
    });
  });
  it('carries ICE servers and a title through both snippets', () => {
    const iceServers = [{ urls: ['stun:stun.example:3478'] }, { urls: 'turn:turn.example:3478', username: 'site', credential: 'it\'s "secret" & <long>' }];
    const snippets = embedSnippets({
      src: 'https://cdn.example/live.m3u8',
      trackers: [],
      scriptUrl: 'https://cdn.example/shoal-player.min.js',
      frameUrl: 'https://cdn.example/embed.html',
      iceServers,
      title: 'Our "live" show',
    });
    const div = new DOMParserLike(snippets.script).attribute('data-shoal-ice-servers');
    expect(JSON.parse(div)).toEqual(iceServers);
    expect(snippets.iframe).toContain('title="Our &quot;live&quot; show"');
    const frameSrc = /src="([^"]+)"/.exec(snippets.iframe)![1]!.replaceAll('&amp;', '&');
    expect(optionsFromQuery(new URL(frameSrc).searchParams).iceServers).toEqual(iceServers);
  });
});
