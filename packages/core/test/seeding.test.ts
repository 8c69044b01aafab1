// Live-edge seeding when every peer knows only its direct neighbours (a partial view of the
// swarm, as with a tracker that hands each peer a few others): how many peers fetch each new live
// segment from the origin. Ideal: 1.
import { describe, expect, it } from 'vitest';
import type { EngineOptionsInput } from '../src/index.js';
import { Prng } from '@shoal/sim/kit';
import { enginesDestroyedAfterEach } from './fakes.js';
import { liveSwarm, type LiveSwarm } from './live-swarm.js';

const LIVE = 'https://origin.test/live.m3u8|shoal1|bw=800000';
const SEGMENT_S = 2;

const engines = enginesDestroyedAfterEach();

/** One live rendition of 200 kB segments, and viewers with fast links playing 5 segments behind the edge. */
const SWARM = {
  origin: { latencyMs: 10, perConnectionBytesPerS: 2_000_000 },
  link: { upBytesPerS: 4_000_000, downBytesPerS: Infinity, latencyMs: 10 },
  player: { liveSyncDurationCount: 5, maxBufferLengthS: 30 },
};
const liveStream = (segmentCount: number) => ({
  renditions: [{ streamKey: LIVE, bitrateBitsPerS: 800_000 }], segmentDurationS: SEGMENT_S, sizeJitter: 0, liveWindowSize: 10, segmentCount,
});

/** Origin requests for each segment from `first` to `last` (served ones, not refused). */
function originFetches(origin: LiveSwarm['origin'], first: number, last: number): number[] {
  const fetches: number[] = [];
  for (let sequence = first; sequence <= last; sequence++) fetches.push(origin.counters.requestsBySequence.get(sequence) ?? 0);
  return fetches;
}

/** Links every viewer of the swarm to every other. */
function linkAll(swarm: LiveSwarm): void {
  const { viewers } = swarm;
  for (let a = 0; a < viewers.length; a++) for (let b = a + 1; b < viewers.length; b++) swarm.link(viewers[a]!, viewers[b]!);
}

interface SeedingRun {
  /** Origin requests per live segment published after warm-up, one entry per segment. */
  fetchesPerSegment: number[];
  meanFetches: number;
  /** Mean number of neighbours per peer. */
  meanDegree: number;
  /** Segments the players got late (each stalled its player) or not at all, over all players. */
  late: number;
}

/**
 * `peers` viewers of one live rendition (200 kB segments), each linked to `linksPerPeer` random
 * others (so about twice that many neighbours) once it plays, each reloading the playlist at its
 * own phase and loading every new segment it lists (a forward buffer longer than the latency,
 * like the demo's hls.js), playing 5 segments behind the edge.
 */
async function measureSeeding(peers: number, linksPerPeer: number, options: EngineOptionsInput = {}, phaseSpreadMs = 2000, seed = 1, segments = 20, reportSwarmSize = false, uploadsOff = (_viewer: number) => false): Promise<SeedingRun> {
  const prng = new Prng(seed);
  const phases = Array.from({ length: peers }, () => Math.floor((prng.next() * phaseSpreadMs) / 100) * 100);
  const swarm = liveSwarm({
    ...SWARM,
    viewers: peers,
    stream: liveStream(10 + segments + 20),
    engineOptions: (viewer) => ({ ...options, ...(uploadsOff(viewer) ? { upload: false } : {}) }),
    playlistPhaseMs: (viewer) => phases[viewer]!,
    seed,
  }, engines);
  const { clock, origin, viewers } = swarm;
  await swarm.untilPlaying();
  // What a tracker's announce response tells each peer: the swarm's size.
  if (reportSwarmSize) for (const viewer of viewers) viewer.signaling.events!.swarmSize?.(peers);
  // The partial mesh: each peer links to a few random others.
  const linked = new Set<string>();
  for (let a = 0; a < peers; a++) {
    for (let made = 0, tries = 0; made < linksPerPeer && tries < 100; tries++) {
      const b = prng.index(peers);
      const key = a < b ? `${a}-${b}` : `${b}-${a}`;
      if (b === a || linked.has(key)) continue;
      linked.add(key);
      made++;
      swarm.link(viewers[a]!, viewers[b]!);
    }
  }
  const firstMeasured = origin.edgeSequence() + 2;
  await clock.advance(segments * SEGMENT_S * 1000);
  const lastMeasured = origin.edgeSequence() - 3;
  await clock.advance(5000);
  const fetchesPerSegment = originFetches(origin, firstMeasured, lastMeasured);
  for (const viewer of viewers) viewer.player.finish();
  return {
    fetchesPerSegment,
    meanFetches: fetchesPerSegment.reduce((sum, n) => sum + n, 0) / fetchesPerSegment.length,
    meanDegree: (2 * linked.size) / peers,
    late: viewers.reduce((sum, { player: { record } }) => sum + record.stalls.length + record.loadErrors, 0),
  };
}

describe('live-edge seeding with partial views', () => {
  it('keeps origin fetches per new live segment near 1 when 30 peers each know about 8 others', async () => {
    // Viewers reload the playlist at phases spread over a segment (as hls.js instances started at
    // different times do), or all at once (the worst case: every peer learns of a segment together).
    const spread = await measureSeeding(30, 4, {}, 2000);
    const together = await measureSeeding(30, 4, {}, 0);
    for (const [name, run] of [['phases spread', spread], ['all at once', together]] as const) {
      console.log(`seeding, 30 peers, mean degree ${run.meanDegree.toFixed(1)}, playlist reloads ${name}: ${run.meanFetches.toFixed(2)} origin fetches per segment [${run.fetchesPerSegment.join(' ')}], late loads ${run.late}`);
      expect(run.fetchesPerSegment.every((n) => n >= 1)).toBe(true);
      expect(run.late).toBe(0);
    }
    expect(spread.meanFetches).toBeLessThanOrEqual(1.2);
    expect(together.meanFetches).toBeLessThanOrEqual(1.5);
  });

  it('keeps origin fetches per new live segment near 1 in a swarm of 200 peers of about 12 neighbours, knowing only the swarm size', async () => {
    // Playlist reloads all at once, the worst case: every neighbourhood's top peer learns of a
    // segment together (with neighbours only, 4.6 fetches per segment).
    const run = await measureSeeding(200, 6, {}, 0, 1, 12, true);
    console.log(`seeding, 200 peers, mean degree ${run.meanDegree.toFixed(1)}, swarm size known: ${run.meanFetches.toFixed(2)} origin fetches per segment [${run.fetchesPerSegment.join(' ')}], late loads ${run.late}`);
    expect(run.fetchesPerSegment.every((n) => n >= 1)).toBe(true);
    expect(run.late).toBe(0);
    expect(run.meanFetches).toBeLessThanOrEqual(1.3);
  }, 60_000);

  it('keeps origin fetches per new live segment at most 1.2 in small swarms that know their size', async () => {
    for (const peers of [8, 16]) {
      const run = await measureSeeding(peers, 6, {}, 2000, 1, 20, true);
      console.log(`seeding, ${peers} peers, mean degree ${run.meanDegree.toFixed(1)}, swarm size known: ${run.meanFetches.toFixed(2)} origin fetches per segment [${run.fetchesPerSegment.join(' ')}], late loads ${run.late}`);
      expect(run.fetchesPerSegment.every((n) => n >= 1)).toBe(true);
      expect(run.late).toBe(0);
      expect(run.meanFetches).toBeLessThanOrEqual(1.2);
    }
  });

  it('elects only neighbours that upload: a third of the viewers with upload off leave origin fetches per segment near 1', async () => {
    // A non-uploading neighbour that won a neighbourhood's election would fetch for nobody, and its
    // neighbours would all wait for the origin until their deadlines.
    const run = await measureSeeding(18, 6, {}, 2000, 1, 20, true, (viewer) => viewer % 3 === 0);
    console.log(`seeding, 18 peers, a third not uploading: ${run.meanFetches.toFixed(2)} origin fetches per segment [${run.fetchesPerSegment.join(' ')}], late loads ${run.late}`);
    expect(run.late).toBe(0);
    expect(run.meanFetches).toBeLessThanOrEqual(1.5);
  });

  it('shares in a flash crowd: peers that met while their players started learn their pace once the uploads stop yielding', async () => {
    // All 12 viewers meet before their first frame, their buffers empty: each yields its uploads
    // (pace 0 on the wire). Nobody asks a peer at pace 0, and a peer is pinged only by those that
    // upload to it: unless the end of yielding is told, nobody would ask anybody for a long while.
    const peers = 12;
    const swarm = liveSwarm({
      ...SWARM,
      viewers: peers,
      stream: liveStream(60),
    }, engines);
    await swarm.untilJoined();
    linkAll(swarm);
    const firstMeasured = swarm.origin.edgeSequence() + 3;
    await swarm.clock.advance(30_000);
    const fetches = originFetches(swarm.origin, firstMeasured, swarm.origin.edgeSequence() - 3);
    for (const viewer of swarm.viewers) viewer.player.finish();
    console.log(`seeding, flash crowd of ${peers}: origin fetches per segment [${fetches.join(' ')}]`);
    expect(fetches.length).toBeGreaterThanOrEqual(8);
    expect(fetches.reduce((sum, n) => sum + n, 0) / fetches.length).toBeLessThanOrEqual(1.5);
  });

  it('fetches a segment again when the origin refused its elected fetch, rather than leave the swarm waiting for it', async () => {
    // For 8 s the first request for each new segment gets 503. Without a retry nobody would fetch
    // it for the others: each viewer waited for it until HTTP had to start, and took it itself.
    const peers = 8;
    const swarm = liveSwarm({ ...SWARM, viewers: peers, stream: liveStream(60) }, engines);
    await swarm.untilPlaying();
    for (const viewer of swarm.viewers) viewer.signaling.events!.swarmSize?.(peers);
    linkAll(swarm);
    await swarm.clock.advance(10_000);
    const firstRefused = swarm.origin.edgeSequence() + 1;
    swarm.origin.refuseFirstRequests = 1;
    await swarm.clock.advance(8_000);
    swarm.origin.refuseFirstRequests = 0;
    const lastRefused = swarm.origin.edgeSequence();
    await swarm.clock.advance(20_000);
    const fetches = originFetches(swarm.origin, firstRefused, lastRefused);
    for (const viewer of swarm.viewers) viewer.player.finish();
    const late = swarm.viewers.reduce((sum, { player: { record } }) => sum + record.stalls.length, 0);
    console.log(`seeding, ${peers} peers, first request of each new segment refused for 8 s: origin fetches per segment [${fetches.join(' ')}], stalls ${late}`);
    expect(fetches.length).toBeGreaterThanOrEqual(4);
    expect(fetches.reduce((sum, n) => sum + n, 0) / fetches.length).toBeLessThanOrEqual(2);
    expect(late).toBe(0);
  });
});
