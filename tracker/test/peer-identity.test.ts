// Who may speak for a peer, tried where an attacker stands: a plain WebSocket client against the
// built tracker (one thread, and two nodes on a real redis-server). A peer_id belongs to the
// socket that announced it first; another socket gets it only by showing the announce `key` the
// peer joined with, or once the first socket is gone. An answer is relayed only for an offer the
// tracker gave the answerer. A `stopped` in someone else's name changes nothing.

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WsPeer, binaryId, sdp, type Message } from './support/ws-peer.js';
import { startCliTracker, startCluster, type CliTracker, type TrackerCluster } from './support/processes.js';

const isResponse = (m: Message) => m.action === 'announce' && m.complete !== undefined;
const isOffer = (m: Message) => m.action === 'announce' && m.offer !== undefined;
const isAnswer = (m: Message) => m.action === 'announce' && m.answer !== undefined;
const isFailure = (m: Message) => m['failure reason'] !== undefined;
const httpUrl = (wsUrl: string, path: string) => wsUrl.replace(/^ws/, 'http') + path;
const getJson = async (url: string) => (await (await fetch(url)).json()) as Record<string, any>;

const peers: WsPeer[] = [];
afterEach(() => {
  for (const peer of peers.splice(0)) peer.close();
});
const connect = async (url: string) => {
  const peer = await WsPeer.connect(url);
  peers.push(peer);
  return peer;
};

const announce = (hash: string, id: string, extra: Record<string, unknown> = {}) => ({
  action: 'announce', event: 'started', info_hash: hash, peer_id: binaryId(id), left: 1, numwant: 0, offers: [], ...extra,
});
const offers = (label: string, n: number) => ({
  numwant: n,
  offers: Array.from({ length: n }, (_, i) => ({ offer: sdp('offer', `${label}-${i}`), offer_id: binaryId(`${label}-o${i}`) })),
});
/** Joins and waits for the response. */
const join = async (peer: WsPeer, hash: string, id: string, extra: Record<string, unknown> = {}) => {
  peer.send(announce(hash, id, extra));
  return peer.next(isResponse);
};
/** The swarm's counts as `peer`'s node sees them. */
const counts = async (peer: WsPeer, hash: string) => {
  peer.send({ action: 'scrape', info_hash: hash });
  const files = (await peer.next((m) => m.action === 'scrape')).files as Record<string, Message>;
  return files[hash]!.incomplete;
};

describe('peer identity at the built tracker', () => {
  let tracker: CliTracker;
  beforeAll(async () => {
    tracker = await startCliTracker(['--workers', '1']);
  }, 30_000);
  afterAll(() => tracker.close());

  it("refuses an impostor announcing a viewer's peer_id, with or without a guessed key, and the viewer keeps its offers", async () => {
    const hash = binaryId('identity-impostor');
    const victim = await connect(tracker.url);
    await join(victim, hash, 'victim', { key: 'victim-secret' });
    const impostor = await connect(tracker.url);
    for (const key of [undefined, 'guessed-key']) {
      impostor.send(announce(hash, 'victim', key ? { key } : {}));
      expect(await impostor.next(isFailure)).toMatchObject({ action: 'announce', info_hash: hash, 'failure reason': 'peer_id in use by another connection' });
    }
    expect(await counts(impostor, hash)).toBe(1);

    const offerer = await connect(tracker.url);
    await join(offerer, hash, 'offerer', offers('from-offerer', 2));
    expect(await victim.next(isOffer)).toMatchObject({ peer_id: binaryId('offerer'), offer_id: binaryId('from-offerer-o0') });
    expect(await impostor.silent(isOffer)).toBe(true);
    // (/stats.json is a snapshot up to a second old.)
    await expect.poll(async () => (await getJson(httpUrl(tracker.url, '/stats.json'))).totals.peerIdInUse, { timeout: 3000, interval: 100 }).toBeGreaterThanOrEqual(2);
  });

  it('relays an answer only from the peer the offer was given to, back to the peer that made it', async () => {
    const hash = binaryId('identity-answer');
    const viewer = await connect(tracker.url);
    await join(viewer, hash, 'viewer');
    const offerer = await connect(tracker.url);
    await join(offerer, hash, 'offerer', offers('real', 1));
    const offer = await viewer.next(isOffer);

    // A third peer of the swarm answers that offer (its id learnt somehow), and one never made.
    const impostor = await connect(tracker.url);
    await join(impostor, hash, 'impostor');
    const answer = { action: 'announce', info_hash: hash, peer_id: binaryId('impostor'), to_peer_id: binaryId('offerer'), answer: sdp('answer', 'forged') };
    impostor.send({ ...answer, offer_id: offer.offer_id });
    expect((await impostor.next(isFailure))['failure reason']).toMatch(/no offer this tracker gave you/);
    impostor.send({ ...answer, offer_id: binaryId('never-made') });
    expect((await impostor.next(isFailure))['failure reason']).toMatch(/no offer this tracker gave you/);
    // Nor may it answer in the viewer's name.
    impostor.send({ ...answer, peer_id: binaryId('viewer'), offer_id: offer.offer_id });
    expect((await impostor.next(isFailure))['failure reason']).toMatch(/not announced/);
    expect(await offerer.silent(isAnswer)).toBe(true);

    // The viewer's own answer goes through, once.
    const real = { action: 'announce', info_hash: hash, peer_id: binaryId('viewer'), to_peer_id: binaryId('offerer'), offer_id: offer.offer_id, answer: sdp('answer', 'real') };
    viewer.send(real);
    expect(await offerer.next(isAnswer)).toMatchObject({ peer_id: binaryId('viewer'), answer: sdp('answer', 'real') });
    viewer.send(real);
    expect((await viewer.next(isFailure))['failure reason']).toMatch(/no offer/);
    await expect.poll(async () => (await getJson(httpUrl(tracker.url, '/stats.json'))).totals.answersWithoutOffer, { timeout: 3000, interval: 100 }).toBeGreaterThanOrEqual(3);
  });

  it("leaves a viewer in its swarm when another socket sends started and then stopped in its name", async () => {
    const hash = binaryId('identity-stop');
    const victim = await connect(tracker.url);
    await join(victim, hash, 'victim');
    const impostor = await connect(tracker.url);
    impostor.send(announce(hash, 'victim'));
    await impostor.next((m) => isFailure(m) || isResponse(m));
    impostor.send(announce(hash, 'victim', { event: 'stopped' }));
    await impostor.next((m) => isFailure(m) || isResponse(m));
    expect(await counts(impostor, hash)).toBe(1);
    const offerer = await connect(tracker.url);
    await join(offerer, hash, 'offerer', offers('after-stop', 1));
    expect(await victim.next(isOffer)).toMatchObject({ peer_id: binaryId('offerer') });
  });

  it('gives a reconnecting viewer its peer_id back on its key while the old socket is open; without a key, once that socket is gone', async () => {
    const hash = binaryId('identity-reconnect');
    const before = await connect(tracker.url);
    await join(before, hash, 'phoenix', { key: 'phoenix-key' });
    const after = await connect(tracker.url);
    expect(await join(after, hash, 'phoenix', { key: 'phoenix-key' })).toMatchObject({ incomplete: 1 });
    const offerer = await connect(tracker.url);
    await join(offerer, hash, 'offerer', offers('to-phoenix', 1));
    expect(await after.next(isOffer)).toMatchObject({ peer_id: binaryId('offerer') });
    expect(await before.silent(isOffer)).toBe(true);
    // The old socket is now the stranger: its stop changes nothing, its close takes nothing away.
    before.send(announce(hash, 'phoenix', { event: 'stopped' }));
    await before.next((m) => isFailure(m) || isResponse(m));
    before.close();
    await before.closed();
    expect(await counts(offerer, hash)).toBe(2);

    // A client without a key (bittorrent-tracker's) waits for its old socket to close.
    const plainBefore = await connect(tracker.url);
    await join(plainBefore, hash, 'plain');
    const plainAfter = await connect(tracker.url);
    plainAfter.send(announce(hash, 'plain'));
    expect((await plainAfter.next(isFailure))['failure reason']).toBe('peer_id in use by another connection');
    plainBefore.close();
    await plainBefore.closed();
    await expect.poll(() => counts(offerer, hash), { timeout: 2000 }).toBe(2);
    expect(await join(plainAfter, hash, 'plain')).toMatchObject({ incomplete: 3 });
  });
});

describe('peer identity across two tracker nodes on Redis', () => {
  let cluster: TrackerCluster;
  beforeAll(async () => {
    cluster = await startCluster(2);
  }, 60_000);
  afterAll(() => cluster.close());

  /** Until node `peer` is on counts `incomplete` peers in the swarm (a join crosses Redis within moments). */
  const sees = (peer: WsPeer, hash: string, incomplete: number) => expect.poll(() => counts(peer, hash), { timeout: 3000, interval: 20 }).toBe(incomplete);

  it("refuses an impostor on node B the peer_id of a viewer on node A, whose offers still reach it; the viewer's key moves it to B", async () => {
    const [urlA, urlB] = cluster.urls as [string, string];
    const hash = binaryId('identity-cluster');
    const victim = await connect(urlA);
    await join(victim, hash, 'victim', { key: 'victim-secret' });
    const impostor = await connect(urlB);
    await sees(impostor, hash, 1);
    for (const key of [undefined, 'guessed-key']) {
      impostor.send(announce(hash, 'victim', key ? { key } : {}));
      expect((await impostor.next(isFailure))['failure reason']).toBe('peer_id in use by another connection');
    }

    // An offer from a peer on node B crosses to the victim's socket on node A, and its answer comes back.
    const offerer = await connect(urlB);
    await join(offerer, hash, 'offerer', offers('cross', 1));
    const offer = await victim.next(isOffer);
    expect(offer).toMatchObject({ peer_id: binaryId('offerer') });
    expect(await impostor.silent(isOffer)).toBe(true);
    victim.send({ action: 'announce', info_hash: hash, peer_id: binaryId('victim'), to_peer_id: binaryId('offerer'), offer_id: offer.offer_id, answer: sdp('answer', 'cross') });
    expect(await offerer.next(isAnswer)).toMatchObject({ peer_id: binaryId('victim') });
    await sees(victim, hash, 2);

    // The viewer reconnects through node B with its key: its peer_id moves there, on both nodes.
    const returning = await connect(urlB);
    expect(await join(returning, hash, 'victim', { key: 'victim-secret' })).toMatchObject({ incomplete: 2 });
    // Node A has let go of it (the move reaches A over Redis within moments).
    await expect.poll(async () => (await getJson(httpUrl(urlA, '/stats.json'))).cluster.localPeers, { timeout: 3000, interval: 50 }).toBe(0);
    const second = await connect(urlA);
    await join(second, hash, 'second', offers('after-move', 2));
    expect(await returning.next(isOffer)).toMatchObject({ peer_id: binaryId('second') });
    expect(await victim.silent(isOffer)).toBe(true);
  });
});
