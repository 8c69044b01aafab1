import { describe, expect, it } from 'vitest';
import { SwarmRegistry, type PeerEntry } from '../src/swarm-registry.js';

const hash = (n: number) => `h${String(n).padStart(19, '0')}`;
const peer = (n: number) => `p${String(n).padStart(19, '0')}`;

function announce(
  registry: SwarmRegistry<string>,
  infoHash: string,
  peerId: string,
  extra: { owner?: string; event?: 'started' | 'update' | 'completed' | 'stopped' | 'paused'; left?: number; key?: string; nowMs?: number } = {},
) {
  return registry.announce({
    infoHash,
    peerId,
    owner: extra.owner ?? peerId,
    event: extra.event ?? 'started',
    left: extra.left ?? 100,
    key: extra.key ?? null,
    nowMs: extra.nowMs ?? 0,
  });
}

describe('SwarmRegistry', () => {
  it('counts seeders and leechers as peers join, complete and stop', () => {
    const registry = new SwarmRegistry<string>();
    announce(registry, hash(1), peer(1));
    announce(registry, hash(1), peer(2), { left: 0 });
    const swarm = registry.getSwarm(hash(1))!;
    expect([swarm.complete, swarm.incomplete]).toEqual([1, 1]);

    announce(registry, hash(1), peer(1), { event: 'completed', left: 0 });
    expect([swarm.complete, swarm.incomplete, swarm.downloaded]).toEqual([2, 0, 1]);

    announce(registry, hash(1), peer(2), { event: 'stopped' });
    expect([swarm.complete, swarm.incomplete, swarm.size]).toEqual([1, 0, 1]);
    expect(registry.counts()).toEqual({ swarms: 1, peers: 1, seeders: 1, leechers: 0 });
  });

  it('treats update, completed and paused from an unknown peer as a join, and stopped from one as a no-op', () => {
    const registry = new SwarmRegistry<string>();
    expect(announce(registry, hash(1), peer(1), { event: 'update' }).joined).toBe(true);
    expect(announce(registry, hash(1), peer(2), { event: 'paused' }).joined).toBe(true);
    expect(announce(registry, hash(1), peer(3), { event: 'completed', left: 0 }).joined).toBe(true);
    expect(announce(registry, hash(1), peer(1), { event: 'started' }).joined).toBe(false);
    const stopped = announce(registry, hash(2), peer(9), { event: 'stopped' });
    expect(stopped.peer).toBeNull();
    expect(registry.counts()).toEqual({ swarms: 1, peers: 3, seeders: 1, leechers: 2 });
  });

  it('frees a swarm as soon as its last peer leaves', () => {
    const registry = new SwarmRegistry<string>();
    const removed: string[] = [];
    registry.onPeerRemoved = (entry) => removed.push(entry.peerId);
    announce(registry, hash(1), peer(1));
    announce(registry, hash(1), peer(2));
    announce(registry, hash(1), peer(1), { event: 'stopped' });
    expect(registry.swarms.size).toBe(1);
    registry.remove(registry.getPeer(hash(1), peer(2))!);
    expect(registry.swarms.size).toBe(0);
    expect(removed).toEqual([peer(1), peer(2)]);
    expect(registry.counts()).toEqual({ swarms: 0, peers: 0, seeders: 0, leechers: 0 });
  });

  it('keeps array indexes consistent through swap-removal', () => {
    const registry = new SwarmRegistry<string>();
    for (let i = 0; i < 50; i++) announce(registry, hash(1), peer(i));
    for (let i = 0; i < 50; i += 3) registry.remove(registry.getPeer(hash(1), peer(i))!);
    const swarm = registry.getSwarm(hash(1))!;
    swarm.peers.forEach((entry, index) => expect(entry.index).toBe(index));
    expect(swarm.size).toBe(swarm.byId.size);
  });

  it('samples distinct peers other than the asking one, never more than exist', () => {
    const registry = new SwarmRegistry<string>();
    for (let i = 0; i < 10; i++) announce(registry, hash(1), peer(i));
    const swarm = registry.getSwarm(hash(1))!;
    const self = registry.getPeer(hash(1), peer(0))!;
    for (let round = 0; round < 200; round++) {
      const picked = registry.samplePeers(swarm, 5, self);
      expect(picked).toHaveLength(5);
      expect(new Set(picked).size).toBe(5);
      expect(picked).not.toContain(self);
      swarm.peers.forEach((entry, index) => expect(entry.index).toBe(index));
    }
    expect(registry.samplePeers(swarm, 50, self)).toHaveLength(9);
    expect(registry.samplePeers(swarm, 0, self)).toHaveLength(0);
  });

  it('samples uniformly: every other peer is picked about equally often', () => {
    const registry = new SwarmRegistry<string>();
    for (let i = 0; i < 20; i++) announce(registry, hash(1), peer(i));
    const swarm = registry.getSwarm(hash(1))!;
    const self = registry.getPeer(hash(1), peer(0))!;
    const hits = new Map<string, number>();
    const rounds = 20_000;
    for (let round = 0; round < rounds; round++) {
      for (const entry of registry.samplePeers(swarm, 3, self)) hits.set(entry.peerId, (hits.get(entry.peerId) ?? 0) + 1);
    }
    const expected = (rounds * 3) / 19;
    expect(hits.size).toBe(19);
    for (const count of hits.values()) expect(Math.abs(count - expected) / expected).toBeLessThan(0.1);
  });

  it('expires peers that missed their announces, oldest first, and refreshes those that announce', () => {
    const registry = new SwarmRegistry<string>();
    announce(registry, hash(1), peer(1), { nowMs: 0 });
    announce(registry, hash(1), peer(2), { nowMs: 10 });
    announce(registry, hash(2), peer(3), { nowMs: 20 });
    announce(registry, hash(1), peer(1), { event: 'update', nowMs: 30 });
    expect(registry.expire(25)).toBe(2);
    expect(registry.getPeer(hash(1), peer(1))).toBeDefined();
    expect(registry.getPeer(hash(1), peer(2))).toBeUndefined();
    expect(registry.getSwarm(hash(2))).toBeUndefined();
    expect(registry.expire(31)).toBe(1);
    expect(registry.counts().peers).toBe(0);
  });

  it('keeps a peer id with its first owner against another owner without its key, even a stop', () => {
    const registry = new SwarmRegistry<string>();
    announce(registry, hash(1), peer(1), { owner: 'socket-a', key: 'secret' });
    for (const key of [undefined, 'guess']) {
      for (const event of ['started', 'completed', 'stopped'] as const) {
        const result = announce(registry, hash(1), peer(1), { owner: 'socket-b', event, left: 0, ...(key ? { key } : {}) });
        expect(result).toMatchObject({ taken: true, peer: null, replacedOwner: null });
      }
    }
    expect(registry.getPeer(hash(1), peer(1))).toMatchObject({ owner: 'socket-a', complete: false });
    expect(registry.counts()).toMatchObject({ peers: 1, seeders: 0 });
    // A peer that joined without a key can never be taken over.
    announce(registry, hash(1), peer(2), { owner: 'socket-c' });
    expect(announce(registry, hash(1), peer(2), { owner: 'socket-d', event: 'update' }).taken).toBe(true);
  });

  it('moves a peer id to a new owner that shows the key it joined with, and reports the old one', () => {
    const registry = new SwarmRegistry<string>();
    announce(registry, hash(1), peer(1), { owner: 'socket-a', key: 'secret' });
    const result = announce(registry, hash(1), peer(1), { owner: 'socket-b', event: 'update', key: 'secret' });
    expect(result).toMatchObject({ taken: false, replacedOwner: 'socket-a' });
    expect(result.peer!.owner).toBe('socket-b');
    expect(registry.counts().peers).toBe(1);
    // Now the old owner is the stranger.
    expect(announce(registry, hash(1), peer(1), { owner: 'socket-a', event: 'stopped' }).taken).toBe(true);
    expect(registry.counts().peers).toBe(1);
  });

  it('removes a whole swarm at once', () => {
    const registry = new SwarmRegistry<string>();
    for (let i = 0; i < 5; i++) announce(registry, hash(1), peer(i));
    announce(registry, hash(2), peer(9));
    expect(registry.removeSwarm(hash(1))).toBe(5);
    expect(registry.counts()).toEqual({ swarms: 1, peers: 1, seeders: 0, leechers: 1 });
  });

  it('touches a bounded number of swarm slots per announce, however large the swarm', () => {
    // Counts reads and writes of the swarm's peer array through a Proxy: a walk over the swarm
    // would touch ~N slots per announce; O(1) announce + O(k) sampling touches a few per pick.
    const slotsPerAnnounce = (swarmSize: number) => {
      const registry = new SwarmRegistry<string>();
      for (let i = 0; i < swarmSize; i++) announce(registry, hash(1), peer(i));
      const swarm = registry.getSwarm(hash(1))!;
      let touched = 0;
      const counting = new Proxy(swarm.peers, {
        get(target, key, receiver) {
          if (typeof key === 'string' && /^\d+$/.test(key)) touched++;
          return Reflect.get(target, key, receiver);
        },
        set(target, key, value, receiver) {
          if (typeof key === 'string' && /^\d+$/.test(key)) touched++;
          return Reflect.set(target, key, value, receiver);
        },
      });
      (swarm as unknown as { peers: PeerEntry<string>[] }).peers = counting;
      const rounds = 500;
      for (let i = 0; i < rounds; i++) {
        const result = announce(registry, hash(1), peer(i % swarmSize), { event: 'update', nowMs: i });
        registry.samplePeers(swarm, 5, result.peer);
      }
      announce(registry, hash(1), peer(swarmSize + 1));
      registry.remove(registry.getPeer(hash(1), peer(0))!);
      return touched / rounds;
    };
    const small = slotsPerAnnounce(100);
    const large = slotsPerAnnounce(100_000);
    expect(small).toBeGreaterThan(5); // the Proxy really is in the path
    expect(small).toBeLessThanOrEqual(30);
    expect(large).toBeLessThanOrEqual(30);
  });
});

describe('SwarmRegistry with a seeded random', () => {
  it('samples the same peers in the same order from the same seed, and uses it', () => {
    // A small linear congruential generator: the simulator brings its own seeded PRNG.
    const seeded = (seed: number) => () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const run = (seed: number) => {
      const registry = new SwarmRegistry<string>({ random: seeded(seed) });
      for (let n = 0; n < 50; n++) announce(registry, hash(1), peer(n));
      const swarm = registry.getSwarm(hash(1))!;
      return Array.from({ length: 5 }, () => registry.samplePeers(swarm, 5, null).map((entry) => entry.peerId));
    };
    expect(run(7)).toEqual(run(7));
    expect(run(7)).not.toEqual(run(8));
    let calls = 0;
    const counted = new SwarmRegistry<string>({ random: () => (calls++, 0) });
    announce(counted, hash(2), peer(1));
    announce(counted, hash(2), peer(2));
    // random() = 0 always picks the first remaining slot: the array order, unshuffled.
    expect(counted.samplePeers(counted.getSwarm(hash(2))!, 2, null).map((entry) => entry.peerId)).toEqual([peer(1), peer(2)]);
    expect(calls).toBe(2);
  });
});
