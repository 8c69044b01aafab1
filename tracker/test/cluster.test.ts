// Several tracker nodes acting as one: `--workers 2` (threads of one process) and three nodes on a
// real redis-server. Counts cover the whole cluster with each peer once, offers cross nodes, a
// killed node's peers are forgotten within its lease (and its clients, reconnected to another node,
// meet their peers there again), and a node without Redis keeps serving
// its own peers and says so in /health.

import { afterEach, describe, expect, it } from 'vitest';
import { WsPeer, binaryId, sdp, type Message } from './support/ws-peer.js';
import { freePort, startCliTracker, startCluster, startRedis, stopProcess } from './support/processes.js';

const isResponse = (m: Message) => m.action === 'announce' && m.complete !== undefined;
const isOffer = (m: Message) => m.action === 'announce' && m.offer !== undefined;
const httpUrl = (wsUrl: string, path: string) => wsUrl.replace(/^ws/, 'http') + path;
const getJson = async (url: string) => (await (await fetch(url)).json()) as Record<string, any>;

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Offers the peers have received so far (WsPeer queues unclaimed messages). */
const offersReceived = (peers: WsPeer[]) => peers.reduce((sum, peer) => sum + peer.received.filter(isOffer).length, 0);

/** `count` peers in one swarm, connected to `urls` in turn; each announce carries 3 offers. */
async function joinSwarm(urls: string[], count: number, label: string): Promise<WsPeer[]> {
  const hash = binaryId(label);
  const peers: WsPeer[] = [];
  for (let i = 0; i < count; i++) {
    const peer = await WsPeer.connect(urls[i % urls.length]!);
    cleanups.push(() => peer.close());
    const offers = [0, 1, 2].map((k) => ({ offer: sdp('offer', `${label}-${i}-${k}`), offer_id: binaryId(`${label}-o${i}-${k}`) }));
    peer.send({ action: 'announce', event: 'started', info_hash: hash, peer_id: binaryId(`${label}-p${i}`), left: 1, numwant: 3, offers });
    await peer.next(isResponse);
    peers.push(peer);
  }
  return peers;
}

describe('--workers 2', () => {
  it('spreads sockets over both threads, relays offers between them, and reports the process as one', async () => {
    const tracker = await startCliTracker(['--workers', '2']);
    cleanups.push(() => tracker.close());
    const peers = await joinSwarm([tracker.url], 10, 'threads');
    // Every offer the tracker relayed reached its target, whichever thread held it.
    const stats = await getJson(httpUrl(tracker.url, '/stats.json'));
    await expect.poll(() => offersReceived(peers), { timeout: 3000 }).toBe(stats.totals.offersRelayed);
    // Peer i offers to min(3, i) earlier peers: 24 in all, fewer only if a join had not yet
    // reached the other thread when the next peer announced there (membership is eventually shared).
    expect(stats.totals.offersRelayed).toBeGreaterThanOrEqual(20);
    expect(stats.totals.offersRelayed).toBeLessThanOrEqual(24);
    expect(stats).toMatchObject({ threads: 2, connections: 10, swarms: 1, peers: 10, leechers: 10 });
    expect(stats.totals.announces).toBe(10);
    expect(stats.cluster).toMatchObject({ nodes: 2, localPeers: 10 });
    // The kernel spread 10 sockets over 2 threads (all on one: 2^-9), so some offers crossed.
    expect(stats.cluster.relays.relaysSent).toBeGreaterThan(0);
    expect(stats.cluster.relays.relaysSent).toBe(stats.cluster.relays.relaysReceived);
    const metrics = await (await fetch(httpUrl(tracker.url, '/metrics'))).text();
    expect(metrics).toMatch(/^shoal_tracker_cluster_nodes 2$/m);
    expect(metrics).toMatch(/^shoal_tracker_connections 10$/m);
  });
});

describe('a cluster of three nodes on Redis', () => {
  it('counts each peer once, forgets a killed node within its lease, and serves its own peers while Redis is down', { timeout: 60_000 }, async () => {
    const cluster = await startCluster(3, ['--cluster-lease-sec', '2']);
    cleanups.push(() => cluster.close());
    const peers = await joinSwarm(cluster.urls, 6, 'nodes');
    // Each node relayed offers to peers on every node; all of them arrived (0+1+2+3*3 = 12 at most).
    const relayed = (await Promise.all(cluster.urls.map((url) => getJson(httpUrl(url, '/stats.json'))))).reduce((sum, stats) => sum + stats.totals.offersRelayed, 0);
    await expect.poll(() => offersReceived(peers), { timeout: 3000 }).toBe(relayed);
    expect(relayed).toBeGreaterThanOrEqual(10);

    // Every node sees the whole swarm, each peer once, and holds its own two.
    for (const url of cluster.urls) {
      // A node lists the others from their leases, read at each renewal (a third of a lease).
      await expect.poll(async () => (await getJson(httpUrl(url, '/stats.json'))).cluster.nodes, { timeout: 3000 }).toBe(3);
      // Joins reach every node within moments (each was acknowledged by Redis before its response).
      await expect.poll(() => getJson(httpUrl(url, '/stats.json')), { timeout: 3000 }).toMatchObject({ swarms: 1, peers: 6, connections: 2 });
      const stats = await getJson(httpUrl(url, '/stats.json'));
      expect(stats.cluster).toMatchObject({ nodes: 3, localPeers: 2 });
      expect(stats.cluster.redis).toMatchObject({ up: true });
      expect(await getJson(httpUrl(url, '/health'))).toEqual({ status: 'ok', redis: 'up' });
    }

    // A node dies without a word: the others drop its peers once its lease runs out.
    cluster.nodes[2]!.child.kill('SIGKILL');
    await expect.poll(async () => (await getJson(httpUrl(cluster.urls[0]!, '/stats.json'))).peers, { timeout: 8000, interval: 200 }).toBe(4);
    await expect.poll(async () => (await getJson(httpUrl(cluster.urls[1]!, '/stats.json'))).cluster.nodes, { timeout: 3000, interval: 200 }).toBe(2);

    // One of its clients reconnects to node 0 and announces again: its offers reach its peers on
    // node 1, and their answer comes back across the nodes.
    const hash = binaryId('nodes');
    const returning = await WsPeer.connect(cluster.urls[0]!);
    const returningOffers = [0, 1, 2, 3].map((k) => ({ offer: sdp('offer', `again-${k}`), offer_id: binaryId(`again-o${k}`) }));
    returning.send({ action: 'announce', event: 'started', info_hash: hash, peer_id: binaryId('nodes-p2'), left: 1, numwant: 4, offers: returningOffers });
    expect(await returning.next(isResponse)).toMatchObject({ incomplete: 5 });
    const fromReturning = (m: Message) => isOffer(m) && m.peer_id === binaryId('nodes-p2');
    const onNode1 = [peers[1]!, peers[4]!];
    await expect.poll(() => onNode1.filter((peer) => peer.received.some(fromReturning)).length, { timeout: 3000 }).toBeGreaterThanOrEqual(1);
    const answering = onNode1.find((peer) => peer.received.some(fromReturning))!;
    const answeringId = binaryId(answering === peers[1] ? 'nodes-p1' : 'nodes-p4');
    const offer = await answering.next(fromReturning);
    answering.send({ action: 'announce', info_hash: hash, peer_id: answeringId, to_peer_id: binaryId('nodes-p2'), offer_id: offer.offer_id, answer: sdp('answer', 'again') });
    expect(await returning.next((m) => m.answer !== undefined)).toMatchObject({ offer_id: offer.offer_id, peer_id: answeringId });
    returning.close();
    await expect.poll(async () => (await getJson(httpUrl(cluster.urls[1]!, '/stats.json'))).peers, { timeout: 3000, interval: 100 }).toBe(4);

    // Redis goes away: each node says so and keeps serving its own peers.
    await stopProcess(cluster.redis.child, 'SIGKILL');
    await expect.poll(async () => (await getJson(httpUrl(cluster.urls[0]!, '/health'))).status, { timeout: 5000, interval: 100 }).toBe('degraded');
    const health = await fetch(httpUrl(cluster.urls[0]!, '/health'));
    expect(health.status).toBe(200);
    // Only that: Redis's error (its address among it) is for the log and /stats.json.
    const degraded = await health.json();
    expect(degraded).toEqual({ status: 'degraded', redis: 'unavailable', since: expect.any(String) });
    expect(JSON.stringify(degraded)).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|6379|closed/);
    const aloneHash = binaryId('alone');
    const a = await WsPeer.connect(cluster.urls[0]!);
    const b = await WsPeer.connect(cluster.urls[0]!);
    cleanups.push(() => a.close(), () => b.close());
    a.send({ action: 'announce', event: 'started', info_hash: aloneHash, peer_id: binaryId('alone-a'), left: 1, offers: [] });
    await a.next(isResponse);
    b.send({ action: 'announce', event: 'started', info_hash: aloneHash, peer_id: binaryId('alone-b'), left: 1, numwant: 1, offers: [{ offer: sdp('offer', 'x'), offer_id: binaryId('alone-o') }] });
    expect(await b.next(isResponse)).toMatchObject({ incomplete: 2 });
    expect(await a.next(isOffer)).toMatchObject({ peer_id: binaryId('alone-b') });
    // After a lease without Redis the other node's peers are gone from this node's view.
    await expect.poll(async () => (await getJson(httpUrl(cluster.urls[0]!, '/stats.json'))).peers, { timeout: 8000, interval: 200 }).toBe(4);

    // Redis is back (same port): the nodes re-sync and count each other's peers again.
    const redis = await startRedis(cluster.redis.port);
    cleanups.push(() => redis.close());
    await expect.poll(async () => (await getJson(httpUrl(cluster.urls[1]!, '/stats.json'))).peers, { timeout: 10_000, interval: 200 }).toBe(6);
    expect(await getJson(httpUrl(cluster.urls[0]!, '/health'))).toEqual({ status: 'ok', redis: 'up' });
  });
});

describe('a node started while Redis is away', () => {
  it('serves, says it is degraded, and joins the cluster once Redis answers', async () => {
    const port = await freePort();
    const node = await startCliTracker(['--workers', '1', '--redis', `redis://127.0.0.1:${port}`]);
    cleanups.push(() => node.close());
    expect(await getJson(httpUrl(node.url, '/health'))).toEqual({ status: 'degraded', redis: 'unavailable', since: expect.any(String) });
    const peer = await WsPeer.connect(node.url);
    cleanups.push(() => peer.close());
    peer.send({ action: 'announce', event: 'started', info_hash: binaryId('early'), peer_id: binaryId('early-peer'), left: 1, offers: [] });
    expect(await peer.next(isResponse)).toMatchObject({ incomplete: 1 });
    const redis = await startRedis(port);
    cleanups.push(() => redis.close());
    await expect.poll(async () => (await getJson(httpUrl(node.url, '/health'))).status, { timeout: 8000, interval: 200 }).toBe('ok');
    expect((await getJson(httpUrl(node.url, '/stats.json'))).cluster.nodes).toBe(1);
  });
});
