// Every failure names the request it answers (`action`, and `info_hash` where the request named
// one), rate-limit refusals and unparsable frames included: bittorrent-tracker's client drops its
// shared socket on a message without `action`, and can only route a failure to its torrent by
// `info_hash`.

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { routingOf } from '../src/request-routing.js';
import { WsPeer, binaryId, sdp, type Message } from './support/ws-peer.js';
import { startShoal } from './support/trackers.js';

const isFailure = (m: Message) => typeof m['failure reason'] === 'string';
const isResponse = (m: Message) => m.action === 'announce' && m.complete !== undefined;
/** An info_hash that JSON must escape (quote, backslash, control characters) and that UTF-8 spreads over two bytes per char. */
const awkwardHash = `\u0000"\\\n\u00ff${binaryId('awkward').slice(5)}`;
const plainHash = binaryId('plain');

describe('routingOf', () => {
  const announce = JSON.stringify({ action: 'announce', info_hash: awkwardHash, peer_id: binaryId('p'), offers: [{ offer: sdp('offer', '"info_hash":"x"') }] });
  it.each([
    ['an announce', announce, { action: 'announce', infoHash: awkwardHash }],
    ['a truncated announce', announce.slice(0, 75), { action: 'announce', infoHash: awkwardHash }],
    ['a scrape of one info_hash', JSON.stringify({ action: 'scrape', info_hash: plainHash }), { action: 'scrape', infoHash: plainHash }],
    ['a scrape of a list', JSON.stringify({ action: 'scrape', info_hash: [plainHash] }), { action: 'scrape' }],
    ['an info_hash cut short', '{"action":"announce","info_hash":"abc', { action: 'announce' }],
    ['a 19-char info_hash', JSON.stringify({ action: 'announce', info_hash: 'a'.repeat(19) }), { action: 'announce' }],
    ['a 21-char info_hash', JSON.stringify({ action: 'announce', info_hash: 'a'.repeat(21) }), { action: 'announce' }],
    ['chars above 255', JSON.stringify({ action: 'announce', info_hash: '\u20ac'.repeat(20) }), { action: 'announce' }],
    ['a broken escape', `{"action":"announce","info_hash":"\\x${'a'.repeat(19)}"}`, { action: 'announce' }],
    ['an unknown action', JSON.stringify({ action: 'destroy', info_hash: plainHash }), { infoHash: plainHash }],
    ['no JSON at all', 'hello tracker', {}],
  ])('reads %s the same from text and from UTF-8 bytes', (_label, frame, expected) => {
    expect(routingOf(frame)).toEqual(expected);
    expect(routingOf(new TextEncoder().encode(frame))).toEqual(expected);
  });
});

describe('refusals over a socket', () => {
  let tracker: Awaited<ReturnType<typeof startShoal>>;
  const peers: WsPeer[] = [];
  const connect = async () => {
    const peer = await WsPeer.connect(tracker.url);
    peers.push(peer);
    return peer;
  };
  beforeAll(async () => {
    tracker = await startShoal({ messagesPerSecond: 20, messageBurst: 20 });
  });
  afterEach(() => {
    for (const peer of peers.splice(0)) peer.close();
  });
  afterAll(() => tracker.close());

  const started = (hash: string, id: string) => ({ action: 'announce', event: 'started', info_hash: hash, peer_id: binaryId(id), numwant: 0, offers: [] });

  it('names action and info_hash in every rate-limit refusal of a burst, asks for a pause, and keeps the socket', async () => {
    const alice = await connect();
    alice.send(started(plainHash, 'alice'));
    await alice.next(isResponse);
    const burster = await connect();
    burster.send(started(awkwardHash, 'burster'));
    burster.send(started(plainHash, 'burster'));
    await burster.next(isResponse);
    await burster.next(isResponse);
    const before = tracker.stats().totals.rateLimited;

    // Everything a client sends, cycling: announces with and without offers in both swarms, an
    // answer, scrapes. The bucket holds ~18 tokens: about half of the 36 frames are refused.
    const kinds = [
      (i: number) => ({ action: 'announce', info_hash: awkwardHash, peer_id: binaryId('burster'), numwant: 1, offers: [{ offer: sdp('offer', `o${i}`), offer_id: binaryId(`o${i}`) }] }),
      () => ({ action: 'announce', info_hash: plainHash, peer_id: binaryId('burster'), numwant: 0, offers: [] }),
      (i: number) => ({ action: 'announce', info_hash: plainHash, peer_id: binaryId('burster'), to_peer_id: binaryId('alice'), offer_id: binaryId(`a${i}`), answer: sdp('answer', `a${i}`) }),
      () => ({ action: 'scrape', info_hash: awkwardHash }),
    ];
    const frames = Array.from({ length: 36 }, (_, i) => kinds[i % kinds.length]!(i));
    for (const frame of frames) burster.send(frame);

    await expect.poll(() => tracker.stats().totals.messages, { timeout: 3000 }).toBeGreaterThanOrEqual(1 + 2 + frames.length);
    await new Promise((resolve) => setTimeout(resolve, 200));
    // (The answers that get through are refused too, for answering no offer it was given: not counted here.)
    const refusals = burster.received.filter((m) => m['failure reason'] === 'rate limit exceeded: slow down');
    expect(refusals.length).toBeGreaterThanOrEqual(10);
    expect(refusals.length).toBe(tracker.stats().totals.rateLimited - before);
    // Refusals come in the order of the frames they refuse, which are the last ones sent.
    const refused = frames.slice(frames.length - refusals.length);
    for (const [i, refusal] of refusals.entries()) {
      expect(refusal).toEqual({
        action: refused[i]!.action,
        'failure reason': 'rate limit exceeded: slow down',
        info_hash: refused[i]!.info_hash,
        'min interval': expect.any(Number) as number,
      });
      expect(refusal['min interval']).toBeGreaterThanOrEqual(1);
    }

    // After the pause it asked for, the same socket is served again.
    await new Promise((resolve) => setTimeout(resolve, Number(refusals.at(-1)!['min interval']) * 1000));
    burster.received.length = 0;
    burster.send({ action: 'announce', info_hash: awkwardHash, peer_id: binaryId('burster'), numwant: 0, offers: [] });
    expect(await burster.next(isResponse)).toMatchObject({ info_hash: awkwardHash });
    expect(burster.closeCode).toBeNull();
  });

  it('names action and info_hash when refusing a frame that is not JSON, where the frame shows them', async () => {
    const peer = await connect();
    const announce = JSON.stringify({ action: 'announce', info_hash: awkwardHash, peer_id: binaryId('cut'), numwant: 0, offers: [] });
    peer.send(announce.slice(0, -3));
    expect(await peer.next(isFailure)).toEqual({ action: 'announce', 'failure reason': 'invalid JSON', info_hash: awkwardHash });
    peer.send(JSON.stringify({ action: 'scrape', info_hash: plainHash }).slice(0, -1));
    expect(await peer.next(isFailure)).toEqual({ action: 'scrape', 'failure reason': 'invalid JSON', info_hash: plainHash });
    // Nothing to name: the failure says so alone.
    peer.send('hello tracker');
    expect(await peer.next(isFailure)).toEqual({ 'failure reason': 'invalid JSON' });
  });
});
