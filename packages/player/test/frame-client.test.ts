import { afterEach, describe, expect, it } from 'vitest';
import { ShoalFrameClient } from '../src/frame-client.js';
import type { CommandMessage } from '../src/frame-protocol.js';

// The host window and the iframe, as far as the client touches them: messages the client posts
// are kept, and `fromFrame` delivers what the frame page would post back.
function fakeFrame() {
  const listeners = new Set<(event: MessageEvent) => void>();
  const posted: CommandMessage[] = [];
  const contentWindow = { postMessage: (message: CommandMessage) => posted.push(message) };
  const iframe = { src: 'https://player.example/embed.html', contentWindow, addEventListener() {}, removeEventListener() {} };
  const win = {
    location: { href: 'https://host.example/' },
    addEventListener: (_type: string, listener: (event: MessageEvent) => void) => listeners.add(listener),
    removeEventListener: (_type: string, listener: (event: MessageEvent) => void) => listeners.delete(listener),
  };
  const fromFrame = (data: object) => {
    for (const listener of listeners) listener({ source: contentWindow, data } as unknown as MessageEvent);
  };
  const respond = (command: string, result: object) => {
    const message = posted.find((candidate) => candidate.command === command);
    fromFrame({ shoal: 'player', kind: 'response', id: message!.id, ok: true, result });
  };
  return { iframe: iframe as unknown as HTMLIFrameElement, win: win as unknown as Window, fromFrame, respond };
}

describe('ShoalFrameClient', () => {
  let client: ShoalFrameClient | undefined;
  afterEach(() => client?.destroy());

  it('passes the playback field of a current frame page through', async () => {
    const frame = fakeFrame();
    client = new ShoalFrameClient(frame.iframe, {}, frame.win);
    frame.respond('hello', { src: 'a.m3u8', p2p: 'on', playback: 'hls.js' });
    expect(await client.ready()).toEqual({ src: 'a.m3u8', p2p: 'on', playback: 'hls.js' });
  });

  it('reads `playback` from a frame page that still calls it `engine` (before issue 10)', async () => {
    const frame = fakeFrame();
    client = new ShoalFrameClient(frame.iframe, {}, frame.win);
    const stats: unknown[] = [];
    client.on('stats', (data) => stats.push(data));

    frame.respond('hello', { src: 'a.m3u8', p2p: 'unsupported', engine: 'native' });
    expect(await client.ready()).toEqual({ src: 'a.m3u8', p2p: 'unsupported', playback: 'native' });

    frame.fromFrame({ shoal: 'player', kind: 'event', event: 'stats', data: { engine: 'hls.js', httpBytes: 10 } });
    expect(stats).toEqual([{ playback: 'hls.js', httpBytes: 10 }]);

    const answer = client.getStats();
    frame.respond('getStats', { engine: 'hls.js', httpBytes: 20 });
    expect(await answer).toEqual({ playback: 'hls.js', httpBytes: 20 });
  });

  it("resolves ready() from an old page's `ready` event too", async () => {
    const frame = fakeFrame();
    client = new ShoalFrameClient(frame.iframe, {}, frame.win);
    frame.fromFrame({ shoal: 'player', kind: 'event', event: 'ready', data: { src: 'a.m3u8', p2p: 'off', engine: 'hls.js' } });
    expect(await client.ready()).toEqual({ src: 'a.m3u8', p2p: 'off', playback: 'hls.js' });
  });
});
