import { describe, expect, it } from 'vitest';
import { embedSnippets, optionsFromAttributes, optionsFromQuery, parseFlag } from '../src/embed-attributes.js';

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
    });
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
