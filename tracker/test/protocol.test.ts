// The WebSocket protocol, spoken with raw messages, against our tracker and against
// bittorrent-tracker's server side by side: where clients depend on a behaviour, both agree.
// Ours runs three ways: one thread, `--workers 2` (peers land on either thread), and a cluster
// of three nodes on a real redis-server (peers connect to the nodes in turn, so offers, answers
// and counts cross nodes).

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WsPeer, binaryId, sdp, type Message } from './support/ws-peer.js';
import { startReference, startShoal, type TestTracker } from './support/trackers.js';
import { startCliTracker, startCluster } from './support/processes.js';

const isResponse = (m: Message) => m.action === 'announce' && m.complete !== undefined;
const isOffer = (m: Message) => m.action === 'announce' && m.offer !== undefined;
const isAnswer = (m: Message) => m.action === 'announce' && m.answer !== undefined;

const trackers: Record<string, () => Promise<TestTracker>> = {
  shoal: () => startShoal(),
  'shoal --workers 2': () => startCliTracker(['--workers', '2']),
  'shoal cluster of 3 on Redis': () => startCluster(3),
  'bittorrent-tracker': startReference,
};

describe.each(Object.keys(trackers))('protocol with %s', (name) => {
  let tracker: TestTracker;
  const peers: WsPeer[] = [];
  let connections = 0;
  const connect = async () => {
    const urls = tracker.urls ?? [tracker.url];
    const peer = await WsPeer.connect(urls[connections++ % urls.length]!);
    peers.push(peer);
    return peer;
  };
  const infoHash = binaryId(`swarm-${name}`);
  /**
   * Until `peer`'s node counts the swarm as given (scrape, at most 2 s): in a cluster, another
   * node's join reaches this node over Redis's pub/sub, which may be read after a client's own
   * message that arrived at the same moment (1 run in 14 on a busy machine).
   */
  const sees = async (peer: WsPeer, hash: string, complete: number, incomplete: number) => {
    for (const until = Date.now() + 2000; ; ) {
      peer.send({ action: 'scrape', info_hash: hash });
      const files = (await peer.next((m) => m.action === 'scrape')).files as Record<string, Message>;
      if ((files[hash]?.complete === complete && files[hash]?.incomplete === incomplete) || Date.now() > until) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  beforeAll(async () => {
    tracker = await trackers[name]!();
  }, 60_000);
  afterEach(() => {
    for (const peer of peers.splice(0)) peer.close();
  });
  afterAll(async () => {
    await tracker.close();
  });

  it('answers an announce with interval, info_hash and the swarm counts', async () => {
    const alice = await connect();
    alice.send({ action: 'announce', event: 'started', info_hash: infoHash, peer_id: binaryId('alice'), left: 100, numwant: 0, offers: [] });
    const response = await alice.next(isResponse);
    expect(response).toMatchObject({ action: 'announce', info_hash: infoHash, complete: 0, incomplete: 1 });
    expect(response.interval).toBeGreaterThan(0);
  });

  it('relays offers to other peers, never to the offerer, and the answer back to the offerer', async () => {
    const hash = binaryId(`relay-${name}`);
    const alice = await connect();
    const bob = await connect();
    alice.send({ action: 'announce', event: 'started', info_hash: hash, peer_id: binaryId('alice'), left: 0, numwant: 0, offers: [] });
    await alice.next(isResponse);
    await sees(bob, hash, 1, 0);
    const offers = [
      { offer: sdp('offer', 'b1'), offer_id: binaryId('offer-1') },
      { offer: sdp('offer', 'b2'), offer_id: binaryId('offer-2') },
    ];
    bob.send({ action: 'announce', event: 'started', info_hash: hash, peer_id: binaryId('bob'), left: 50, numwant: 2, offers });
    expect(await bob.next(isResponse)).toMatchObject({ complete: 1, incomplete: 1, info_hash: hash });

    // Only one other peer: exactly one of the two offers reaches alice; none comes back to bob.
    const offer = await alice.next(isOffer);
    expect(offer).toMatchObject({ action: 'announce', peer_id: binaryId('bob'), info_hash: hash, offer: sdp('offer', 'b1'), offer_id: binaryId('offer-1') });
    expect(await alice.silent(isOffer)).toBe(true);
    expect(await bob.silent(isOffer, 100)).toBe(true);

    alice.send({ action: 'announce', info_hash: hash, peer_id: binaryId('alice'), to_peer_id: binaryId('bob'), answer: sdp('answer', 'a1'), offer_id: offer.offer_id });
    expect(await bob.next(isAnswer)).toMatchObject({
      action: 'announce', answer: sdp('answer', 'a1'), offer_id: binaryId('offer-1'), peer_id: binaryId('alice'), info_hash: hash,
    });
    // The answerer gets no announce response for an answer.
    expect(await alice.silent(isResponse, 200)).toBe(true);
  });

  it('scrapes one or several info_hashes, with zeros for unknown ones', async () => {
    const hashA = binaryId(`scrape-a-${name}`);
    const hashB = binaryId(`scrape-b-${name}`);
    const unknown = binaryId(`scrape-none-${name}`);
    const alice = await connect();
    const bob = await connect();
    alice.send({ action: 'announce', event: 'started', info_hash: hashA, peer_id: binaryId('alice'), left: 0, offers: [] });
    bob.send({ action: 'announce', event: 'started', info_hash: hashA, peer_id: binaryId('bob'), left: 10, offers: [] });
    bob.send({ action: 'announce', event: 'started', info_hash: hashB, peer_id: binaryId('bob'), left: 10, offers: [] });
    await alice.next(isResponse);
    await bob.next(isResponse);
    await bob.next(isResponse);

    alice.send({ action: 'scrape', info_hash: hashA });
    const single = await alice.next((m) => m.action === 'scrape');
    expect((single.files as Record<string, unknown>)[hashA]).toMatchObject({ complete: 1, incomplete: 1 });

    alice.send({ action: 'scrape', info_hash: [hashA, hashB, unknown] });
    const files = (await alice.next((m) => m.action === 'scrape')).files as Record<string, Message>;
    expect(files[hashA]).toMatchObject({ complete: 1, incomplete: 1 });
    expect(files[hashB]).toMatchObject({ complete: 0, incomplete: 1 });
    expect(files[unknown]).toMatchObject({ complete: 0, incomplete: 0 });
  });

  it('moves a peer to complete on `completed`, removes it on `stopped` and when its socket closes', async () => {
    const hash = binaryId(`life-${name}`);
    const alice = await connect();
    const bob = await connect();
    const watcher = await connect();
    const counts = async () => {
      watcher.send({ action: 'scrape', info_hash: hash });
      const files = (await watcher.next((m) => m.action === 'scrape')).files as Record<string, Message>;
      return [files[hash]!.complete, files[hash]!.incomplete];
    };
    alice.send({ action: 'announce', event: 'started', info_hash: hash, peer_id: binaryId('alice'), left: 10, offers: [] });
    bob.send({ action: 'announce', event: 'started', info_hash: hash, peer_id: binaryId('bob'), left: 10, offers: [] });
    await alice.next(isResponse);
    await bob.next(isResponse);
    expect(await counts()).toEqual([0, 2]);

    alice.send({ action: 'announce', event: 'completed', info_hash: hash, peer_id: binaryId('alice'), left: 0 });
    expect(await alice.next(isResponse)).toMatchObject({ complete: 1, incomplete: 1 });

    bob.send({ action: 'announce', event: 'stopped', info_hash: hash, peer_id: binaryId('bob'), left: 10 });
    expect(await bob.next(isResponse)).toMatchObject({ complete: 1, incomplete: 0 });
    expect(await counts()).toEqual([1, 0]);

    alice.close();
    await alice.closed();
    await expect.poll(counts, { timeout: 2000 }).toEqual([0, 0]);
  });

  it('gives a failure reason for a malformed info_hash or peer_id and keeps the socket', async () => {
    const alice = await connect();
    alice.send({ action: 'announce', event: 'started', info_hash: 'short', peer_id: binaryId('alice'), offers: [] });
    expect((await alice.next((m) => m['failure reason'] !== undefined))['failure reason']).toMatch(/info_hash/);
    alice.send({ action: 'announce', event: 'started', info_hash: infoHash, peer_id: 'x'.repeat(21), offers: [] });
    expect((await alice.next((m) => m['failure reason'] !== undefined))['failure reason']).toMatch(/peer_id/);
    alice.send({ action: 'announce', event: 'started', info_hash: infoHash, peer_id: binaryId('alice'), left: 1, offers: [] });
    expect(await alice.next(isResponse)).toMatchObject({ info_hash: infoHash });
  });
});

describe('protocol details of the shoal tracker', () => {
  let tracker: Awaited<ReturnType<typeof startShoal>>;
  const peers: WsPeer[] = [];
  let connections = 0;
  const connect = async () => {
    const urls = tracker.urls ?? [tracker.url];
    const peer = await WsPeer.connect(urls[connections++ % urls.length]!);
    peers.push(peer);
    return peer;
  };
  beforeAll(async () => {
    tracker = await startShoal({ maxOffersPerAnnounce: 3 });
  });
  afterEach(() => {
    for (const peer of peers.splice(0)) peer.close();
  });
  afterAll(() => tracker.close());

  const join = async (peer: WsPeer, hash: string, id: string, offers: unknown[] = []) => {
    peer.send({ action: 'announce', event: 'started', info_hash: hash, peer_id: binaryId(id), left: 1, numwant: offers.length, offers });
    return peer.next(isResponse);
  };
  const offerList = (n: number) => Array.from({ length: n }, (_, i) => ({ offer: sdp('offer', `o${i}`), offer_id: binaryId(`offer-${i}`) }));

  it('relays each offer to a different peer, up to numwant and the configured cap', async () => {
    const hash = binaryId('fanout');
    const listeners = await Promise.all(Array.from({ length: 6 }, () => connect()));
    for (const [i, listener] of listeners.entries()) await join(listener, hash, `listener-${i}`);
    const offerer = await connect();
    await join(offerer, hash, 'offerer', offerList(5));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const got = listeners.map((listener) => listener.received.filter(isOffer));
    // Capped at 3 by maxOffersPerAnnounce, each to a distinct peer.
    expect(got.flat()).toHaveLength(3);
    expect(got.every((offers) => offers.length <= 1)).toBe(true);
    expect(new Set(got.flat().map((m) => m.offer_id)).size).toBe(3);

    const second = await connect();
    second.send({ action: 'announce', event: 'started', info_hash: hash, peer_id: binaryId('second'), left: 1, numwant: 1, offers: offerList(3) });
    await second.next(isResponse);
    await new Promise((resolve) => setTimeout(resolve, 200));
    // numwant 1: one offer, to any other peer of the swarm (the first offerer included).
    expect([...listeners, offerer].flatMap((l) => l.received.filter(isOffer))).toHaveLength(3 + 1);
  });

  it('allows one peer_id per swarm per connection', async () => {
    const hash = binaryId('one-id');
    const alice = await connect();
    await join(alice, hash, 'alice');
    alice.send({ action: 'announce', event: 'started', info_hash: hash, peer_id: binaryId('mallory'), left: 1, offers: [] });
    expect(await alice.next((m) => m['failure reason'] !== undefined)).toMatchObject({
      'failure reason': 'one peer_id per info_hash per connection', info_hash: hash,
    });
    // The same connection may use another peer id in another swarm.
    await join(alice, binaryId('other-swarm'), 'mallory');
  });

  it('refuses answers to offers it did not give, and from peers that never announced', async () => {
    const hash = binaryId('answers');
    const alice = await connect();
    await join(alice, hash, 'alice');
    alice.send({ action: 'announce', info_hash: hash, peer_id: binaryId('alice'), to_peer_id: binaryId('ghost'), answer: sdp('answer', 'x'), offer_id: binaryId('o') });
    expect((await alice.next((m) => m['failure reason'] !== undefined))['failure reason']).toMatch(/no offer this tracker gave you/);
    const stranger = await connect();
    stranger.send({ action: 'announce', info_hash: hash, peer_id: binaryId('stranger'), to_peer_id: binaryId('alice'), answer: sdp('answer', 'x'), offer_id: binaryId('o') });
    expect((await stranger.next((m) => m['failure reason'] !== undefined))['failure reason']).toMatch(/not announced/);
    expect(await alice.silent(isAnswer)).toBe(true);
  });

  it('lets only the connection holding a peer stop it', async () => {
    const hash = binaryId('stop-owner');
    const alice = await connect();
    await join(alice, hash, 'alice');
    const mallory = await connect();
    mallory.send({ action: 'announce', event: 'stopped', info_hash: hash, peer_id: binaryId('alice') });
    expect(await mallory.next(isResponse)).toMatchObject({ complete: 0, incomplete: 1 });
    expect(tracker.stats().peers).toBeGreaterThanOrEqual(1);
    alice.send({ action: 'announce', event: 'stopped', info_hash: hash, peer_id: binaryId('alice') });
    expect(await alice.next(isResponse)).toMatchObject({ complete: 0, incomplete: 0 });
  });

  it('refuses a full scrape by default', async () => {
    const alice = await connect();
    alice.send({ action: 'scrape' });
    expect(await alice.next()).toMatchObject({ action: 'scrape', 'failure reason': 'full scrape is disabled on this tracker' });
  });

  it('lets a reconnecting client take its peer_id over from its old socket by showing its key, and no one else', async () => {
    const hash = binaryId('reconnect');
    const first = await connect();
    first.send({ action: 'announce', event: 'started', info_hash: hash, peer_id: binaryId('phoenix'), key: 'phoenix-key', left: 1, offers: [] });
    await first.next(isResponse);
    const stranger = await connect();
    stranger.send({ action: 'announce', event: 'started', info_hash: hash, peer_id: binaryId('phoenix'), left: 1, offers: [] });
    expect(await stranger.next((m) => m['failure reason'] !== undefined)).toMatchObject({ 'failure reason': 'peer_id in use by another connection', info_hash: hash });
    const second = await connect();
    second.send({ action: 'announce', event: 'started', info_hash: hash, peer_id: binaryId('phoenix'), key: 'phoenix-key', left: 1, offers: [] });
    expect(await second.next(isResponse)).toMatchObject({ incomplete: 1 });
    first.close();
    await first.closed();
    const watcher = await connect();
    watcher.send({ action: 'scrape', info_hash: hash });
    const files = (await watcher.next((m) => m.action === 'scrape')).files as Record<string, Message>;
    expect(files[hash]).toMatchObject({ incomplete: 1 });
  });

  it('relays offers and answers as the bytes they were sent in, escapes and non-ASCII included, as valid JSON', async () => {
    const hash = binaryId('bytes');
    const alice = await connect();
    await join(alice, hash, 'alice');
    const raw: string[] = [];
    alice.socket.on('message', (data) => raw.push(data.toString()));
    const bob = await connect();
    const bobRaw: string[] = [];
    bob.socket.on('message', (data) => bobRaw.push(data.toString()));
    // Hand-written JSON: escapes JSON.stringify would not produce, raw non-ASCII, odd spacing.
    const offerJson = '{ "type" : "offer", "sdp" : "v=0\\r\\na=x:\\u0041\\/\\"q\\" é 𝄞 \u2028 \\\\ end" , "n" : [1.5e3, true, null, {}] }';
    const ids = { info_hash: hash, peer_id: binaryId('bob'), offer_id: binaryId('offer-b') };
    bob.send(`{"action":"announce","event":"started","info_hash":${JSON.stringify(ids.info_hash)},"peer_id":${JSON.stringify(ids.peer_id)},"left":1,"numwant":1,"offers":[{"offer":${offerJson},"offer_id":${JSON.stringify(ids.offer_id)}}]}`);
    const offer = await alice.next(isOffer);
    expect(offer).toMatchObject({ peer_id: ids.peer_id, info_hash: hash, offer_id: ids.offer_id, offer: JSON.parse(offerJson) as object });
    expect(raw.find((text) => text.includes('"offer":'))).toContain(`"offer":${offerJson},`);

    const answerJson = '{"type":"answer","sdp":"v=0\\r\\nü\\t\\b\\f\\u00ff"}';
    alice.send(`{"action":"announce","info_hash":${JSON.stringify(hash)},"peer_id":${JSON.stringify(binaryId('alice'))},"to_peer_id":${JSON.stringify(ids.peer_id)},"offer_id":${JSON.stringify(ids.offer_id)},"answer":${answerJson}}`);
    expect(await bob.next(isAnswer)).toMatchObject({ peer_id: binaryId('alice'), offer_id: ids.offer_id, info_hash: hash, answer: JSON.parse(answerJson) as object });
    expect(bobRaw.find((text) => text.includes('"answer":'))).toContain(`"answer":${answerJson},`);
  });

  it('parses binary frames as UTF-8 text, and closes a socket whose text frame is not valid UTF-8', async () => {
    const hash = binaryId('binary');
    const alice = await connect();
    alice.socket.send(Buffer.from(JSON.stringify({ action: 'announce', info_hash: hash, peer_id: binaryId('alice'), left: 1, offers: [] })), { binary: true });
    expect(await alice.next(isResponse)).toMatchObject({ info_hash: hash, incomplete: 1 });
    const mallory = await connect();
    const invalid = Buffer.concat([Buffer.from('{"action":"announce","info_hash":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    mallory.socket.send(invalid, { binary: false });
    // uWS drops it (1006, no close frame) rather than relay bytes a browser would reject.
    expect([1006, 1007]).toContain(await mallory.closed());
    // The tracker keeps serving the others.
    alice.send({ action: 'scrape', info_hash: hash });
    expect(await alice.next((m) => m.action === 'scrape')).toMatchObject({ files: { [hash]: { incomplete: 1 } } });
  });
});
