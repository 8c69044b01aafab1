import { describe, expect, it } from 'vitest';
import { embedSnippets, optionsFromAttributes, optionsFromQuery, parseFlag } from '../src/embed-attributes.js';

const element = (attributes: Record<string, string>) => ({ getAttribute: (name: string) => attributes[name] ?? null });

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
    const frameSrc = /src="([^"]+)"/.exec(snippets.iframe)![1]!.replaceAll('&amp;', '&');
    expect(optionsFromQuery(new URL(frameSrc).searchParams)).toMatchObject({
      src: 'https://cdn.example/live.m3u8?token=a&b="c"',
      trackers: ['wss://t.example/announce'],
      autoplay: true,
      muted: true,
      p2p: true,
    });
  });
});
