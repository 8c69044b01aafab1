import type { PeerTransport, SignalingEvents, SwarmSignal } from '@shoal/core';
import { describe, expect, it } from 'vitest';
import { ChannelLedger, FlowNetwork, Prng, SimHost, VirtualClock } from '../src/kit.js';
import { DEFAULT_SIGNALING_PARAMS, SimTracker } from '../src/sim-tracker.js';

// The simulated tracker on the real tracker's swarm bookkeeping (@shoal/tracker/swarm-registry):
// members join at their first announce, offers reach other members, a leaver is removed and the
// empty swarm freed.

const INFO_HASH = 'swarm-a';

function world(params = DEFAULT_SIGNALING_PARAMS) {
  const clock = new VirtualClock();
  const tracker = new SimTracker(clock, new FlowNetwork(clock), new ChannelLedger(), params, new Prng(7));
  const join = (name: string) => {
    const host = new SimHost(name, { upBytesPerS: Infinity, downBytesPerS: Infinity, latencyMs: 10 });
    const peers: PeerTransport[] = [];
    const sizes: number[] = [];
    const events: SignalingEvents = { peer: (transport) => peers.push(transport), error: () => {}, warning: () => {}, swarmSize: (size) => sizes.push(size) };
    const signal: SwarmSignal = tracker.signaling(host, name.padEnd(40, '0')).join(INFO_HASH, events);
    return { signal, peers, sizes };
  };
  return { clock, tracker, join };
}

describe('SimTracker', () => {
  it('connects the members of a swarm through offers, and frees the swarm when the last one leaves', async () => {
    const { clock, tracker, join } = world();
    const members = ['a', 'b', 'c'].map(join);
    await clock.runUntil(5_000);
    expect(tracker.swarmSize(INFO_HASH)).toBe(3);
    // Their first announces arrived in turn, each told the swarm's size with itself in it; every
    // member connected to both others.
    expect(members.map((member) => member.sizes[0])).toEqual([1, 2, 3]);
    for (const member of members) expect(member.peers).toHaveLength(2);

    members[0]!.signal.leave();
    await clock.runUntil(6_000);
    expect(tracker.swarmSize(INFO_HASH)).toBe(2);
    for (const member of members.slice(1)) member.signal.leave();
    await clock.runUntil(7_000);
    expect(tracker.swarmSize(INFO_HASH)).toBe(0);
  });

  it('forwards no more offers than there are other members, and none to the announcer', async () => {
    const { clock, tracker, join } = world({ ...DEFAULT_SIGNALING_PARAMS, offersPerAnnounce: 5 });
    join('a');
    await clock.runUntil(1_000);
    // Alone in its swarm: its announce reaches the tracker, which has no one to hand an offer to.
    expect(tracker.swarmSize(INFO_HASH)).toBe(1);
    expect(tracker.offersForwarded).toBe(0);
    const second = join('b');
    await clock.runUntil(2_000);
    expect(tracker.offersForwarded).toBe(1);
    expect(second.peers).toHaveLength(1);
  });
});
