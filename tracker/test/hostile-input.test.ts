// Bad input gets a failure reason or a closed socket, never a crash; a well-behaved client is
// served throughout, and memory returns to its baseline once the abusers are gone.

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WsPeer, binaryId, sdp, type Message } from './support/ws-peer.js';
import { startShoal } from './support/trackers.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const failure = (m: Message) => typeof m['failure reason'] === 'string';
const isResponse = (m: Message) => m.action === 'announce' && m.complete !== undefined;

describe('hostile input', () => {
  let tracker: Awaited<ReturnType<typeof startShoal>>;
  beforeAll(async () => {
    tracker = await startShoal({ maxPayloadBytes: 16 * 1024, messagesPerSecond: 20, messageBurst: 40, maxSwarmsPerConnection: 3000 });
  });
  afterAll(() => tracker.close());

  const goodHash = binaryId('good-swarm');
  const announce = (peerId: string, extra: Message = {}) => ({
    action: 'announce', event: 'started', info_hash: goodHash, peer_id: binaryId(peerId), left: 1, numwant: 0, offers: [], ...extra,
  });

  it.each([
    ['non-JSON', 'hello tracker', /invalid JSON/],
    ['a JSON array', '[1,2,3]', /JSON object/],
    ['a JSON string', '"announce"', /JSON object/],
    ['deeply nested JSON', `${'['.repeat(7000)}${']'.repeat(7000)}`, /JSON object/],
    ['an unknown action', { action: 'destroy', info_hash: goodHash }, /invalid action/],
    ['no action', { info_hash: goodHash }, /invalid action/],
    ['a numeric info_hash', { action: 'announce', info_hash: 12345678901234567890, peer_id: binaryId('x') }, /info_hash/],
    ['a 19-char info_hash', { action: 'announce', info_hash: 'a'.repeat(19), peer_id: binaryId('x') }, /info_hash/],
    ['a 21-char peer_id', { action: 'announce', info_hash: goodHash, peer_id: 'a'.repeat(21) }, /peer_id/],
    ['non-byte characters in info_hash', { action: 'announce', info_hash: '\u20ac'.repeat(20), peer_id: binaryId('x') }, /info_hash/],
    ['an unknown event', { action: 'announce', info_hash: goodHash, peer_id: binaryId('x'), event: 'explode' }, /invalid event/],
    ['offers that are not an array', { action: 'announce', info_hash: goodHash, peer_id: binaryId('x'), offers: { a: 1 } }, /offers/],
    ['an offer without offer_id', { action: 'announce', info_hash: goodHash, peer_id: binaryId('x'), offers: [{ offer: sdp('offer', 'x') }] }, /offers/],
    ['an offer that is a string', { action: 'announce', info_hash: goodHash, peer_id: binaryId('x'), offers: ['x'] }, /offers/],
    ['an answer without to_peer_id', { action: 'announce', info_hash: goodHash, peer_id: binaryId('x'), answer: sdp('answer', 'x'), offer_id: binaryId('o') }, /to_peer_id/],
    ['an answer that is not an object', { action: 'announce', info_hash: goodHash, peer_id: binaryId('x'), answer: 'x', to_peer_id: binaryId('y'), offer_id: binaryId('o') }, /answer/],
    ['a scrape with a bad info_hash', { action: 'scrape', info_hash: ['short'] }, /info_hash/],
    ['a scrape of too many info_hashes', { action: 'scrape', info_hash: Array.from({ length: 51 }, (_, i) => binaryId(`s${i}`)) }, /too many/],
  ])('answers %s with a failure reason', async (_label, message, reason) => {
    const peer = await WsPeer.connect(tracker.url);
    peer.send(message);
    const reply = await peer.next();
    expect(reply['failure reason']).toMatch(reason);
    // The socket stays usable after one bad message.
    peer.send(announce('after-bad'));
    expect(await peer.next(isResponse)).toMatchObject({ info_hash: goodHash });
    peer.send({ action: 'announce', event: 'stopped', info_hash: goodHash, peer_id: binaryId('after-bad') });
    peer.close();
  });

  it('closes a socket that sends an oversized frame', async () => {
    const peer = await WsPeer.connect(tracker.url);
    peer.send({ action: 'announce', info_hash: goodHash, peer_id: binaryId('big'), padding: 'x'.repeat(32 * 1024) });
    await peer.closed();
  });

  it('keeps serving a well-behaved client while abusers flood, spam swarms and send garbage, then frees their memory', async () => {
    // A generous rate limit, so the swarm spammers (paced under it) can reach the swarm cap.
    await tracker.close();
    tracker = await startShoal({ messagesPerSecond: 2000, messageBurst: 100, maxSwarmsPerConnection: 3000 });
    // One offer/answer exchange and one bad frame first: the code they compile stays on the heap
    // and is not memory the abusers leave behind.
    {
      const warmHash = binaryId('warm-up');
      const [first, second] = await Promise.all([WsPeer.connect(tracker.url), WsPeer.connect(tracker.url)]);
      first.send({ ...announce('warm-1'), info_hash: warmHash });
      await first.next((m) => m.complete !== undefined);
      second.send({ ...announce('warm-2'), info_hash: warmHash, numwant: 1, offers: [{ offer: sdp('offer', 'w'), offer_id: binaryId('warm-offer') }] });
      const offer = await first.next((m) => m.offer !== undefined);
      first.send({ action: 'announce', info_hash: warmHash, peer_id: binaryId('warm-1'), to_peer_id: offer.peer_id, offer_id: offer.offer_id, answer: sdp('answer', 'w') });
      await second.next((m) => m.answer !== undefined);
      first.send('not json');
      await first.next((m) => m['failure reason'] !== undefined);
      first.close();
      second.close();
      await Promise.all([first.closed(), second.closed()]);
    }
    await expect.poll(() => tracker.stats().connections, { timeout: 3000 }).toBe(0);
    const baseline = tracker.stats();
    gc();
    const heapBefore = process.memoryUsage().heapUsed;

    // A well-behaved pair: bob announces with an offer every 100 ms; alice must get each offer.
    const alice = await WsPeer.connect(tracker.url);
    const bob = await WsPeer.connect(tracker.url);
    alice.send(announce('alice'));
    await alice.next(isResponse);
    let served = 0;
    let stopGood = false;
    const goodLoop = (async () => {
      for (let i = 0; !stopGood; i++) {
        bob.send(announce('bob', { event: i === 0 ? 'started' : 'update', numwant: 1, offers: [{ offer: sdp('offer', `o${i}`), offer_id: binaryId(`bob-offer-${i}`) }] }));
        const response = await bob.next(isResponse, 5000);
        expect(response).toMatchObject({ complete: 0, incomplete: 2 });
        const offer = await alice.next((m) => m.offer_id === binaryId(`bob-offer-${i}`), 5000);
        expect(offer.peer_id).toBe(binaryId('bob'));
        served++;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();

    // Flooders: announce as fast as possible from one connection each.
    const flooders = await Promise.all(Array.from({ length: 4 }, () => WsPeer.connect(tracker.url)));
    for (const [n, flooder] of flooders.entries()) {
      for (let i = 0; i < 3000; i++) flooder.send(announce(`flood-${n}`, { event: 'update' }));
    }
    // Swarm spammers: thousands of info_hashes from one connection, at a pace under the rate limit.
    const spammers = await Promise.all(Array.from({ length: 2 }, () => WsPeer.connect(tracker.url)));
    const spamSwarms = async (spammer: WsPeer, n: number) => {
      for (let i = 0; i < 3200; i++) {
        spammer.send({ action: 'announce', event: 'started', info_hash: binaryId(`spam-${n}-${i}`), peer_id: binaryId(`spammer-${n}`), left: 1, offers: [] });
        if (i % 10 === 9) await new Promise((resolve) => setTimeout(resolve, 10));
      }
    };
    const spamming = Promise.all(spammers.map((s, n) => spamSwarms(s, n)));
    const garbage = await WsPeer.connect(tracker.url);
    for (let i = 0; i < 300; i++) garbage.send(`{"action":"announce","info_hash":${i}`);

    const floodCodes = await Promise.all(flooders.map((f) => f.closed(5000)));
    expect(floodCodes.every((code) => code === 1008)).toBe(true);
    expect(await garbage.closed(5000)).toBe(1008);
    for (const f of flooders) expect(f.received.some((m) => /rate limit/.test(String(m['failure reason'])))).toBe(true);

    await spamming;
    // Each spammer got its 3,000 swarms and a failure reason for every one beyond the cap.
    await expect.poll(() => tracker.stats().swarms, { timeout: 5000 }).toBe(6000 + 1);
    for (const spammer of spammers) {
      await spammer.next((m) => /too many swarms/.test(String(m['failure reason'])));
      expect(spammer.closeCode).toBeNull();
    }
    gc();
    const heapGrowth = process.memoryUsage().heapUsed - heapBefore;

    stopGood = true;
    await goodLoop;
    expect(served).toBeGreaterThanOrEqual(5);

    for (const s of spammers) s.close();
    await Promise.all(spammers.map((s) => s.closed()));
    alice.close();
    bob.close();
    await Promise.all([alice.closed(), bob.closed()]);
    await expect.poll(() => tracker.stats().connections, { timeout: 3000 }).toBe(baseline.connections);

    const after = tracker.stats();
    expect(after.swarms).toBe(baseline.swarms);
    expect(after.peers).toBe(baseline.peers);
    // What the test's own clients received is the test's memory, not the tracker's: let it go.
    for (const client of [...flooders, ...spammers, garbage, alice, bob]) client.received.length = 0;
    gc();
    const heapAfter = process.memoryUsage().heapUsed;
    // The spam cost real memory, and nearly all of it is given back.
    expect(heapGrowth).toBeGreaterThan(1024 * 1024);
    expect(heapAfter - heapBefore).toBeLessThan(heapGrowth / 4);
  });
});
