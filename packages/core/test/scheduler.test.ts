import { describe, expect, it } from 'vitest';
import { LiveEdgeSeeding, electOriginFetchers, newlyListed, relayExpiry, seedStartDelayMs } from '../src/plan/live-edge-seeding.js';
import { SegmentState, type SegmentStateValue } from '../src/wire/peer-protocol.js';
import {
  nextPlanMs,
  parkedStep,
  plan,
  prefetchWindow,
  resolveLatencyMode,
  segmentDeadlineMs,
  MAX_WASTED_P2P_TRANSFERS,
  TCP_INITIAL_WINDOW_BYTES,
  httpBudgetMs,
  httpRoundTrips,
  sharedDownlinkBytes,
  windowsFor,
  type LegPlan,
  type PeerPlan,
  type SchedulerInput,
  type SegmentPlan,
} from '../src/plan/scheduler.js';
import { MAX_MEETING_WAIT_MS, meetingPeersWaits, playbackAtRisk, playbackWantsPlan } from '../src/plan/playback-policy.js';
import type { PlaybackReport, SegmentRef } from '../src/types.js';

const settings = { httpSafetyFactor: 1.5, httpSafetyMarginMs: 1000, p2pWindowS: 60 };
const MB = 1_000_000;

function segment(sequence: number, deadlineMs: number, extra: Partial<SegmentPlan> = {}): SegmentPlan {
  return { sequence, sizeBytes: MB, deadlineMs, requested: true, httpInFlight: false, seedAtMs: undefined, comingFromPeer: false, seedSatisfied: false, wastedP2PTransfers: 0, ...extra };
}
/** A leg of the whole segment from peer `peerId`, started at `startedMs`, `received` bytes in so far. */
function leg(peerId: string, received: number, startedMs: number, extra: Partial<LegPlan> = {}): LegPlan {
  return { id: 1, peerId, start: 0, end: Infinity, received, startedMs, firstByteMs: startedMs, orphaned: false, ...extra };
}
function peer(id: string, has: number[], throughputBytesPerS = 2 * MB, busy = false): PeerPlan {
  return { id, offers: new Set(has), throughputBytesPerS, busy };
}
function input(extra: Partial<SchedulerInput>): SchedulerInput {
  return {
    nowMs: 10_000, isLive: false, segments: [], peers: [], httpThroughputBytesPerS: MB,
    windows: windowsFor('normal', settings), p2pDownload: true, maxP2PDownloads: 4, ...extra,
  };
}
const withoutWake = (actions: ReturnType<typeof plan>) => actions.filter((action) => action.type !== 'wake');

describe('scheduler', () => {
  // HTTP budget for 1 MB at 1 MB/s: 1000 ms x 1.5 + 1000 ms margin = 2500 ms.
  it('fetches the urgent segment over HTTP when no peer can deliver in time', () => {
    const actions = plan(input({ segments: [segment(5, 12_000)], peers: [peer('a', [5])] }));
    expect(withoutWake(actions)).toEqual([{ type: 'http', sequence: 5, reason: 'urgent' }]);
  });

  it('splits a segment in the P2P window over the idle peers that have it, in ranges sized to their rates', () => {
    const peers = [peer('slow', [5], 1 * MB), peer('fast', [5], 4 * MB), peer('busy', [5], 9 * MB, true), peer('other', [6], 9 * MB)];
    const [action] = withoutWake(plan(input({ segments: [segment(5, 30_000)], peers })));
    // 4 and 1 MB/s (x 0.85 slack): 800 kB and 200 kB, each in about 235 ms; the size is an estimate, so the last range runs to the end.
    expect(action).toMatchObject({ type: 'p2p', sequence: 5, withinMs: 20_000 - 1000 });
    const parts = action!.type === 'p2p' ? action!.parts : [];
    expect(parts.map((part) => part.peerId)).toEqual(['fast', 'slow']);
    expect(parts[0]!.start).toBe(0);
    expect(parts[0]!.end).toBeCloseTo(800_000, -3);
    expect(parts[1]).toEqual({ peerId: 'slow', start: parts[0]!.end, end: Infinity });
    // Known to be 1 MB: the last range ends there.
    const [known] = withoutWake(plan(input({ segments: [segment(5, 30_000, { sizeKnown: true })], peers })));
    expect(known!.type === 'p2p' && known!.parts.at(-1)!.end).toBe(MB);
  });

  it('takes one peer when its uplink alone brings the segment in time, several when none does', () => {
    const slow = (id: string) => peer(id, [5], 100_000);
    // 1 MB at 85 kB/s each: 11.8 s alone, past the 10 s available; three bring it in 3.9 s.
    const [split] = withoutWake(plan(input({ segments: [segment(5, 21_000)], peers: [slow('a'), slow('b'), slow('c')] })));
    expect(split!.type === 'p2p' && split!.parts.length).toBe(3);
    // One of them alone: the origin, when HTTP must start.
    expect(withoutWake(plan(input({ segments: [segment(5, 21_000)], peers: [slow('a')] })))).toEqual([]);
  });

  it('asks no peer for a segment whose P2P bytes were thrown away twice: it waits for HTTP\'s time, then the origin', () => {
    const holders = [peer('a', [5])];
    expect(withoutWake(plan(input({ segments: [segment(5, 30_000, { wastedP2PTransfers: 1 })], peers: holders })))[0]).toMatchObject({ type: 'p2p', parts: [{ peerId: 'a' }] });
    const given = plan(input({ segments: [segment(5, 30_000, { wastedP2PTransfers: MAX_WASTED_P2P_TRANSFERS })], peers: holders }));
    expect(withoutWake(given)).toEqual([{ type: 'http', sequence: 5, reason: 'no-peer' }]);
  });

  it('keeps an in-flight P2P transfer for an urgent segment while it is predicted in time', () => {
    const actions = plan(input({ segments: [segment(5, 12_000, { legs: [leg('a', 900_000, 9_000)] })], peers: [peer('a', [5])] }));
    expect(withoutWake(actions)).toEqual([]);
  });

  it('moves the rest of a P2P leg that will miss its deadline to the origin, as a Range request', () => {
    // 100 KB in 4 s: 25 KB/s, 900 KB left, deadline in 1.5 s.
    const actions = plan(input({ segments: [segment(5, 11_500, { legs: [leg('a', 100_000, 6_000)] })], peers: [peer('a', [5])] }));
    expect(withoutWake(actions)).toEqual([{ type: 'move', sequence: 5, legId: 1, toPeerId: undefined, withinMs: 0 }]);
  });

  it('moves a leg that falls behind to another holder while HTTP would still fit after it', () => {
    // 900 KB left at 25 KB/s: 36 s, the deadline is in 10 s; b brings them in 0.45 s.
    const segments = [segment(5, 20_000, { legs: [leg('a', 100_000, 6_000)] })];
    const peers = [peer('a', [5]), peer('b', [5])];
    // The remainder's HTTP budget (2350 ms) is what b's range must leave before the deadline.
    expect(withoutWake(plan(input({ segments, peers })))).toEqual([{ type: 'move', sequence: 5, legId: 1, toPeerId: 'b', withinMs: 10_000 - 2350 }]);
    // Where b would leave no time for HTTP after it: the origin.
    expect(withoutWake(plan(input({ nowMs: 17_650, segments, peers })))).toEqual([{ type: 'move', sequence: 5, legId: 1, toPeerId: undefined, withinMs: 0 }]);
    // Without another holder it runs while HTTP could still bring the rest.
    expect(withoutWake(plan(input({ segments, peers: [peer('a', [5])] })))).toEqual([]);
  });

  it('trusts a leg whose first byte has not come on its peer\'s promise, until HTTP must start for it', () => {
    const waiting = leg('a', 0, 9_000, { firstByteMs: undefined, withinMs: 9_000 });
    expect(withoutWake(plan(input({ segments: [segment(5, 20_000, { legs: [waiting] })], peers: [peer('a', [5], 1000)] })))).toEqual([]);
    // 2500 ms before the deadline HTTP must start for the whole: the promise no longer counts.
    const due = plan(input({ nowMs: 17_500, segments: [segment(5, 20_000, { legs: [waiting] })], peers: [peer('a', [5], 1000)] }));
    expect(withoutWake(due)).toEqual([{ type: 'move', sequence: 5, legId: 1, toPeerId: undefined, withinMs: 0 }]);
  });

  it('drops a transfer nobody waits for whose leg cannot go on from peers', () => {
    const orphan = leg('gone', 120_000, 0, { orphaned: true });
    expect(withoutWake(plan(input({ segments: [segment(5, 30_000, { requested: false, legs: [orphan] })], peers: [] })))).toEqual([{ type: 'drop', sequence: 5 }]);
    // The player waits for it: the rest from the origin at once.
    expect(withoutWake(plan(input({ segments: [segment(5, 30_000, { legs: [orphan] })], peers: [] })))).toEqual([{ type: 'move', sequence: 5, legId: 1, toPeerId: undefined, withinMs: 0 }]);
  });

  it('lets a slow transfer run while HTTP could still finish its remainder, and wakes in time to decide', () => {
    const actions = plan(input({ segments: [segment(5, 20_000, { legs: [leg('a', 100_000, 6_000)] })], peers: [peer('a', [5])] }));
    expect(withoutWake(actions)).toEqual([]);
    // remainder 900 KB: 900 ms x 1.5 + 1000 ms = 2350 ms before the deadline
    expect(actions).toContainEqual({ type: 'wake', atMs: 20_000 - 2350 });
  });

  it('budgets HTTP with each round trip\'s wait behind the viewer\'s own uplink queue', () => {
    // A request's round trip, then slow start from a 14,600-byte first flight: 55 kB in about 3.25 round trips.
    expect(httpRoundTrips(0)).toBe(1);
    expect(httpRoundTrips(TCP_INITIAL_WINDOW_BYTES)).toBe(2);
    expect(httpRoundTrips(55_000)).toBeCloseTo(3.25, 2);
    const normal = windowsFor('normal', settings);
    expect(httpBudgetMs(MB, MB, normal)).toBe(2500);
    expect(httpBudgetMs(MB, MB, { ...normal, uplinkQueueMs: 600 })).toBeCloseTo(2500 + 600 * httpRoundTrips(MB), 6);
    // The slow transfer above, behind 600 ms of uplink queue: its remainder goes to HTTP now, not at 17,650.
    const segments = [segment(5, 15_000, { legs: [leg('a', 100_000, 6_000)] })];
    expect(withoutWake(plan(input({ segments, peers: [peer('a', [5])] })))).toEqual([]);
    const congested = plan(input({ segments, peers: [peer('a', [5])], windows: { ...normal, uplinkQueueMs: 600 } }));
    expect(withoutWake(congested)).toEqual([{ type: 'move', sequence: 5, legId: 1, toPeerId: undefined, withinMs: 0 }]);
  });

  it('goes to HTTP at once in VOD when no peer has the requested segment', () => {
    const actions = plan(input({ segments: [segment(5, 30_000)], peers: [peer('a', [7])] }));
    expect(withoutWake(actions)).toEqual([{ type: 'http', sequence: 5, reason: 'no-peer' }]);
  });

  it('waits in live for peers to get a new segment, until HTTP must start', () => {
    const actions = plan(input({ isLive: true, segments: [segment(5, 30_000)], peers: [peer('a', [4])] }));
    expect(actions).toEqual([{ type: 'wake', atMs: 30_000 - 2500 }]);
    const later = plan(input({ nowMs: 27_600, isLive: true, segments: [segment(5, 30_000)], peers: [peer('a', [4])] }));
    expect(withoutWake(later)).toEqual([{ type: 'http', sequence: 5, reason: 'urgent' }]);
  });

  it('stops waiting for peers earlier while other downloads share the downlink', () => {
    // Two other downloads with 1 MB and 0.4 MB to go: 1 + 1 + 0.4 MB at 1 MB/s, x 1.5 + 1000 ms = 4600 ms.
    const shared = { isLive: true, segments: [segment(5, 30_000)], peers: [peer('a', [4])], downlinkLeftBytes: [MB, 400_000] };
    expect(plan(input(shared))).toEqual([{ type: 'wake', atMs: 30_000 - 4600 }]);
    expect(withoutWake(plan(input({ ...shared, nowMs: 25_400 })))).toEqual([{ type: 'http', sequence: 5, reason: 'urgent' }]);
    // Alone on the link it would still wait there.
    expect(plan(input({ ...shared, nowMs: 25_400, downlinkLeftBytes: [] }))).toEqual([{ type: 'wake', atMs: 30_000 - 2500 }]);
  });

  it('counts the other downloads, not the transfer itself, when moving a P2P remainder to HTTP', () => {
    // 900 KB left, listed on the downlink with another download's 2 MB: 900 + 900 KB shared, x 1.5 + 1000 ms = 3700 ms.
    const actions = plan(input({ segments: [segment(5, 20_000, { legs: [leg('a', 100_000, 6_000)] })], peers: [peer('a', [5])], downlinkLeftBytes: [900_000, 2 * MB] }));
    expect(actions).toEqual([{ type: 'wake', atMs: 20_000 - 3700 }]);
  });

  it('never prefetches over HTTP: a segment the player has not asked for is only taken from peers', () => {
    const actions = plan(input({ segments: [segment(5, 11_000, { requested: false }), segment(6, 40_000, { requested: false })], peers: [] }));
    expect(actions).toEqual([]);
  });

  it('fetches from the origin when elected seeder, and only once its stagger has passed', () => {
    const early = plan(input({ isLive: true, segments: [segment(9, 40_000, { requested: false, seedAtMs: 10_300 })], peers: [peer('a', [])] }));
    expect(early).toEqual([{ type: 'wake', atMs: 10_300 }]);
    const due = plan(input({ nowMs: 10_300, isLive: true, segments: [segment(9, 40_000, { requested: false, seedAtMs: 10_300 })], peers: [peer('a', [])] }));
    expect(withoutWake(due)).toEqual([{ type: 'http', sequence: 9, reason: 'seed' }]);
    const preempted = plan(input({ nowMs: 10_300, isLive: true, segments: [segment(9, 40_000, { requested: false, seedAtMs: 10_300, comingFromPeer: true, seedSatisfied: true })], peers: [peer('a', [])] }));
    expect(withoutWake(preempted)).toEqual([]);
  });

  it('holds a due seed fetch while the player waits for an origin download, which would get half the downlink', () => {
    const seed = segment(9, 40_000, { requested: false, seedAtMs: 10_000 });
    const onOrigin = plan(input({ isLive: true, segments: [segment(5, 14_000, { httpInFlight: true }), seed], peers: [peer('a', [])] }));
    expect(withoutWake(onOrigin)).toEqual([]);
    // Also when this plan sends the player's segment to the origin (here, a P2P transfer falling behind).
    const moved = plan(input({ isLive: true, segments: [segment(5, 11_500, { legs: [leg('a', 100_000, 6_000)] }), seed], peers: [peer('a', [5])] }));
    expect(withoutWake(moved)).toEqual([{ type: 'move', sequence: 5, legId: 1, toPeerId: undefined, withinMs: 0 }]);
    const free = plan(input({ isLive: true, segments: [segment(5, 14_000, { requested: false }), seed], peers: [peer('a', [])] }));
    expect(withoutWake(free)).toEqual([{ type: 'http', sequence: 9, reason: 'seed' }]);
  });

  it('respects the limit on P2P legs and gives each peer one leg at a time', () => {
    const segments = [segment(5, 30_000), segment(6, 32_000), segment(7, 34_000, { requested: false })];
    const actions = plan(input({ isLive: true, segments, peers: [peer('a', [5, 6, 7])], maxP2PDownloads: 4 }));
    expect(withoutWake(actions)).toEqual([{ type: 'p2p', sequence: 5, parts: [{ peerId: 'a', start: 0, end: Infinity }], withinMs: 19_000 }]);
    const one = plan(input({ isLive: true, segments, peers: [peer('a', [5, 6, 7]), peer('b', [5, 6, 7])], maxP2PDownloads: 1 }));
    expect(withoutWake(one)).toEqual([{ type: 'p2p', sequence: 5, parts: [{ peerId: 'a', start: 0, end: Infinity }], withinMs: 19_000 }]);
  });

  it('uses P2P only where it cannot hurt in low latency mode', () => {
    const low = windowsFor('low', settings);
    // low budget: 1000 ms x 2.25 + 1000 = 3250 ms HTTP, plus 500 ms of P2P at 2 MB/s
    const tight = plan(input({ windows: low, isLive: true, segments: [segment(5, 13_500)], peers: [peer('a', [5])] }));
    expect(withoutWake(tight)).toEqual([{ type: 'http', sequence: 5, reason: 'no-peer' }]);
    const roomy = plan(input({ windows: low, isLive: true, segments: [segment(5, 14_000)], peers: [peer('a', [5])] }));
    expect(withoutWake(roomy)[0]).toMatchObject({ type: 'p2p', parts: [{ peerId: 'a' }] });
    const nobody = plan(input({ windows: low, isLive: true, segments: [segment(5, 30_000)], peers: [peer('a', [])] }));
    expect(withoutWake(nobody)).toEqual([{ type: 'http', sequence: 5, reason: 'no-peer' }]);
  });

  it('shares the downlink evenly: a download with fewer bytes to go than ours counts whole, a larger one as many as ours', () => {
    expect(sharedDownlinkBytes(100, [])).toBe(100);
    expect(sharedDownlinkBytes(100, [30, 500])).toBe(230);
    // Replacing a listed download: its own bytes are not counted twice.
    expect(sharedDownlinkBytes(100, [100, 30], 100)).toBe(130);
    expect(sharedDownlinkBytes(100, [], 100)).toBe(100);
  });

  it('changes the windows with the latency mode', () => {
    const low = windowsFor('low', settings);
    const normal = windowsFor('normal', settings);
    const high = windowsFor('high', settings);
    expect(low.prefetchAheadS).toBe(0);
    expect(normal.prefetchAheadS).toBe(30);
    expect(high.prefetchAheadS).toBe(60);
    expect(low.httpSafetyFactor).toBeGreaterThan(normal.httpSafetyFactor);
    expect([low.waitForPeers, normal.waitForPeers, high.waitForPeers]).toEqual([false, true, true]);
    // the same live segment, 3.6 s ahead, with a peer that has it: HTTP in low, P2P in normal
    // (HTTP's 2.5 s budget and the peer's 0.5 s first-byte allowance leave it 0.6 s)
    const state = { isLive: true, segments: [segment(5, 13_600)], peers: [peer('a', [5])] };
    expect(withoutWake(plan(input({ ...state, windows: low })))[0]).toMatchObject({ type: 'http' });
    expect(withoutWake(plan(input({ ...state, windows: normal })))[0]).toMatchObject({ type: 'p2p' });
  });

  it('resolves auto latency from the player target and the measured distance to the live edge', () => {
    const live = (positionS: number, targetLatencyS?: number) => ({ positionS, rate: 1, bufferedUntilS: positionS, isLive: true, liveEdgeS: 100, targetLatencyS });
    expect(resolveLatencyMode('auto', live(96, 4), 2)).toBe('low');
    expect(resolveLatencyMode('auto', live(90, 10), 2)).toBe('normal');
    expect(resolveLatencyMode('auto', live(80, 20), 2)).toBe('high');
    expect(resolveLatencyMode('auto', live(80, 4), 2)).toBe('high'); // measured: 20 s behind
    expect(resolveLatencyMode('auto', { positionS: 0, rate: 1, bufferedUntilS: 0, isLive: false }, 2)).toBe('high');
    expect(resolveLatencyMode('low', live(80, 20), 2)).toBe('low');
  });

  it('derives deadlines from playhead and rate, counting a pause as normal speed', () => {
    const playback = { positionS: 10, rate: 2, bufferedUntilS: 20, isLive: false };
    expect(segmentDeadlineMs(1000, playback, 20)).toBe(1000 + 5000);
    expect(segmentDeadlineMs(1000, { ...playback, rate: 0 }, 20)).toBe(1000 + 10_000);
    expect(segmentDeadlineMs(1000, playback, 4)).toBe(1000);
    expect(segmentDeadlineMs(1000, undefined, 50)).toBe(1000);
  });
});

describe('live-edge seeding', () => {
  const ids = Array.from({ length: 200 }, (_, i) => (i * 2654435761 >>> 0).toString(16).padStart(40, '0'));

  it('elects a small, stable number of origin fetchers per live segment', () => {
    for (let sequence = 0; sequence < 50; sequence++) {
      const key = `stream#${sequence}`;
      const elected = electOriginFetchers(key, ids, 1);
      expect(elected).toHaveLength(1);
      // every peer that knows the same swarm elects the same fetcher, whatever order it lists peers in
      expect(electOriginFetchers(key, [...ids].reverse(), 1)).toEqual(elected);
      // a peer leaving that was not elected changes nothing
      const leaver = ids.find((id) => id !== elected[0])!;
      expect(electOriginFetchers(key, ids.filter((id) => id !== leaver), 1)).toEqual(elected);
    }
    expect(electOriginFetchers('stream#1', ids, 2)).toHaveLength(2);
  });

  it('spreads the origin fetches over the peers', () => {
    const counts = new Map<string, number>();
    for (let sequence = 0; sequence < 2000; sequence++) {
      const [winner] = electOriginFetchers(`stream#${sequence}`, ids.slice(0, 10), 1);
      counts.set(winner!, (counts.get(winner!) ?? 0) + 1);
    }
    expect(counts.size).toBe(10);
    for (const count of counts.values()) expect(count).toBeGreaterThan(100); // 200 expected each
  });

  it('staggers elected fetchers so the best-ranked starts first', () => {
    const key = 'stream#7';
    const ranked = electOriginFetchers(key, ids, 3);
    const delays = ranked.map((id) => seedStartDelayMs(id, ids, key, 3, undefined, 1000)!);
    expect([...delays].sort((a, b) => a - b)).toEqual(delays);
    expect(delays[0]).toBeLessThan(50);
  });
});

describe('planning around plan()', () => {
  const refs: SegmentRef[] = Array.from({ length: 20 }, (_, i) => ({ streamKey: 's', sequence: i, url: `${i}.ts`, startS: i * 4, durationS: 4 }));

  it('prefetches the segments from the playhead within the window', () => {
    const picked = prefetchWindow(refs, 9, 10, Infinity, () => MB).map((ref) => ref.sequence);
    expect(picked).toEqual([2, 3, 4]); // #2 plays at 9 s; #4 starts at 16 s < 19 s; #5 at 20 s is beyond
  });

  it('stops prefetching where the segments would not fit in the store budget', () => {
    expect(prefetchWindow(refs, 0, 60, 2.5 * MB, () => MB).map((ref) => ref.sequence)).toEqual([0, 1]);
  });

  const parked = { nowMs: 10_000, recheckAtMs: 12_000, requested: true, sizeBytes: MB, httpThroughputBytesPerS: MB, windows: windowsFor('normal', settings) };

  it('rechecks parked P2P bytes once the integrity manifest can be fetched again', () => {
    expect(parkedStep({ ...parked, nowMs: 12_000, deadlineMs: 13_000 })).toBe('recheck');
  });

  it('gives up parked bytes for HTTP when the waiting player could not wait for the next manifest', () => {
    // HTTP needs 2500 ms: it must start at 12 000 for a 14 500 deadline, no later than the recheck
    expect(parkedStep({ ...parked, deadlineMs: 14_500 })).toBe('give-up');
    expect(parkedStep({ ...parked, deadlineMs: 14_501 })).toBe('wait');
  });

  it('keeps parked bytes nobody waits for until the manifest can be fetched again', () => {
    expect(parkedStep({ ...parked, requested: false, deadlineMs: 10_000 })).toBe('wait');
  });

  it('plans again on the tick while P2P runs or a load waits, else only at the wake-up', () => {
    expect(nextPlanMs(1000, 5000, Infinity, true, false, 250)).toBe(1250);
    expect(nextPlanMs(1000, 5000, Infinity, false, true, 250)).toBe(1250);
    expect(nextPlanMs(1000, 5000, 3000, false, false, 250)).toBe(3000);
    expect(nextPlanMs(1000, Infinity, Infinity, false, false, 250)).toBe(Infinity);
  });

  const playing: PlaybackReport = { positionS: 10, rate: 1, bufferedUntilS: 20, isLive: false };

  it('asks for a plan on a jump or a changed rate, but not for playback going on as extrapolated', () => {
    expect(playbackWantsPlan(undefined, 0, playing, 0, 0)).toBe(true);
    expect(playbackWantsPlan(playing, 0, { ...playing, positionS: 10.5 }, 500, 0)).toBe(false);
    expect(playbackWantsPlan(playing, 0, { ...playing, positionS: 12 }, 500, 0)).toBe(true); // seek
    expect(playbackWantsPlan(playing, 0, { ...playing, positionS: 10.5, rate: 0 }, 500, 0)).toBe(true);
    expect(playbackWantsPlan(playing, 0, { ...playing, positionS: 11 }, 1000, 0)).toBe(true); // once a second anyway
  });

  it('yields uploads to playback while the buffer is short, not while paused', () => {
    expect(playbackAtRisk({ ...playing, bufferedUntilS: 11 })).toBe(true);
    expect(playbackAtRisk({ ...playing, bufferedUntilS: 13 })).toBe(false);
    expect(playbackAtRisk({ ...playing, bufferedUntilS: 11, rate: 0 })).toBe(false);
    expect(playbackAtRisk({ ...playing, isLive: true, targetLatencyS: 2, bufferedUntilS: 11.5 })).toBe(false); // half of 2 s
    // Meeting peers waits for the low mark whether or not the player plays yet, at most 10 s; without reports it does not wait.
    expect(meetingPeersWaits({ ...playing, bufferedUntilS: 11, rate: 0 }, 0)).toBe(true);
    expect(meetingPeersWaits({ ...playing, bufferedUntilS: 11 }, MAX_MEETING_WAIT_MS)).toBe(false);
    expect(meetingPeersWaits({ ...playing, bufferedUntilS: 13 }, 0)).toBe(false);
    expect(meetingPeersWaits(undefined, 0)).toBe(false);
  });
});

describe('live-edge seeding of one stream', () => {
  const settings = { upload: true, p2pDownload: true, seedersPerSegment: 1, seedStaggerMs: 600 };
  function seeding(extra: Partial<typeof settings> = {}, held = new Set<number>()) {
    const announced: [number, SegmentStateValue][] = [];
    const room = new LiveEdgeSeeding('s', { ...settings, ...extra }, (sequence) => held.has(sequence), (sequence, state) => announced.push([sequence, state]));
    return { room, announced, held };
  }

  it('holds elections for the segments a playlist lists for the first time, however the engine heard of them first', () => {
    const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
    let mark = -Infinity;
    const reload = (sequences: number[]) => {
      const listed = newlyListed(mark, sequences);
      mark = listed.listedUntil;
      return listed.fresh;
    };
    expect(reload(range(0, 9))).toEqual(range(0, 9)); // the first playlist (the engine elects nothing for it)
    expect(reload(range(1, 10))).toEqual([10]); // whether or not the player's load of 10 came first
    expect(reload(range(0, 9))).toEqual([]); // a stale reload lists less: nothing new, the mark stays
    expect(reload(range(1, 10))).toEqual([]);
    expect(reload([])).toEqual([]);
    expect(reload(range(2, 12))).toEqual([11, 12]);
    expect(reload(range(0, 3))).toEqual(range(0, 3)); // the sequence numbers restarted
    expect(reload(range(1, 4))).toEqual([4]);
  });

  it('counts an elected origin fetch as satisfied once a neighbour fetches or has the segment', () => {
    const { room } = seeding();
    const self = electOriginFetchers('s#7', ['me', 'you'], 1)[0]!;
    room.elect([7], self, [self === 'me' ? 'you' : 'me'], undefined, 0);
    expect(room.seedAt.get(7)).toBeDefined();
    expect(room.satisfied(7, true, () => false)).toBe(true);
    expect(room.satisfied(7, false, () => false)).toBe(false);
    expect(room.satisfied(7, false, () => true)).toBe(true); // has it, not fetching
    expect(room.satisfied(8, true, () => true)).toBe(false); // not elected
    // A retry after the origin refused our fetch waits only for a neighbour that has the segment:
    // "fetching" may be our own failed fetch, relayed back.
    room.failed(7, 0);
    expect(room.satisfied(7, true, () => false)).toBe(false);
    expect(room.satisfied(7, true, () => true)).toBe(true);
  });

  it('does not count a neighbour as satisfying when independent origin copies are wanted', () => {
    const { room } = seeding({ seedersPerSegment: 2 });
    room.elect([7], 'me', ['you'], undefined, 0); // both elected with 2 seeders
    expect(room.satisfied(7, true, () => true)).toBe(false);
  });

  it('relays a neighbour\'s "fetching" at the live edge and withdraws it after 4 s without a transfer of ours', () => {
    const { room, announced } = seeding();
    room.relay(9, 10, 0); // behind the edge: not relayed
    room.relay(10, 10, 0);
    expect(announced).toEqual([[10, SegmentState.fetching]]);
    expect(room.expire(1000)).toBe(4000);
    expect(room.expire(4000)).toBe(Infinity);
    expect(announced).toEqual([[10, SegmentState.fetching], [10, SegmentState.none]]);
  });

  it('decides relay expiry from plain data: settled, withdrawn, or due later', () => {
    const relays = [
      { sequence: 10, atMs: 0, held: true },
      { sequence: 11, atMs: 0, held: false },
      { sequence: 12, atMs: 1500, held: false },
    ];
    expect(relayExpiry(relays, 4000)).toEqual({ settled: [10], withdrawn: [11], nextMs: 5500 });
    expect(relayExpiry([], 4000)).toEqual({ settled: [], withdrawn: [], nextMs: Infinity });
  });

  it('keeps a relay that a transfer of ours took over', () => {
    const { room, announced, held } = seeding();
    room.relay(10, 10, 0);
    held.add(10);
    expect(room.expire(5000)).toBe(Infinity);
    expect(announced).toEqual([[10, SegmentState.fetching]]);
  });
});
