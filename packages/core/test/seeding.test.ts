// Live-edge seeding when every peer knows only its direct neighbours (a partial view of the
// swarm, as with a tracker that hands each peer a few others): how many peers fetch each new live
// segment from the origin. Ideal: 1.
import { describe, expect, it } from 'vitest';
import { ShoalEngine, type EngineOptionsInput } from '../src/index.js';
import type { SegmentRef } from '../src/types.js';
import { enginesDestroyedAfterEach, FakeOrigin, ManualSignaling, peerId, UNPACED } from './fakes.js';
import { Prng, VirtualClock, linkTransports } from '../src/testing.js';

const LIVE = 'https://origin.test/live.m3u8|shoal1|bw=800000';
const SEGMENT_S = 2;
const SEGMENT_BYTES = 200_000;
const WINDOW = 10;

const engines = enginesDestroyedAfterEach();

interface SeedingRun {
  /** Origin requests per live segment published after warm-up, one entry per segment. */
  fetchesPerSegment: number[];
  meanFetches: number;
  /** Mean number of neighbours per peer. */
  meanDegree: number;
  /** Segments the players got late (after their deadline), over all players. */
  late: number;
}

/**
 * `peers` viewers of one live rendition, each linked to `linksPerPeer` random others (so about
 * twice that many neighbours), each reloading the playlist at its own phase and requesting every
 * new segment at once (a forward buffer longer than the latency, like the demo's hls.js), playing
 * `behind` segments behind the edge.
 */
async function measureSeeding(peers: number, linksPerPeer: number, options: EngineOptionsInput = {}, phaseSpreadMs = 2000, seed = 1, segments = 20, reportSwarmSize = false, uploadsOff = (_viewer: number) => false): Promise<SeedingRun> {
  const prng = new Prng(seed);
  const rand = () => prng.next();
  const clock = new VirtualClock();
  const origin = new FakeOrigin(clock, 2_000_000);
  const refFor = (sequence: number): SegmentRef => ({
    streamKey: LIVE, sequence, url: `https://origin.test/live/${sequence}.ts`, startS: sequence * SEGMENT_S, durationS: SEGMENT_S,
  });
  let newest = -1;
  const publish = () => {
    newest++;
    origin.files.set(refFor(newest).url, Uint8Array.from({ length: SEGMENT_BYTES }, (_, j) => (j * 7 + newest) & 0xff));
  };
  for (let i = 0; i < 12; i++) publish();
  const behind = 5;
  const viewers = Array.from({ length: peers }, (_, i) => {
    const signaling = new ManualSignaling(peerId(i + 1));
    const engine = new ShoalEngine({ latencyMode: 'normal', ...UNPACED, ...options, ...(uploadsOff(i) ? { upload: false } : {}) }, { clock, http: origin, signaling });
    engines.push(engine);
    return { engine, signaling, phaseMs: Math.floor((rand() * phaseSpreadMs) / 100) * 100, known: -1, next: undefined as number | undefined, late: 0 };
  });
  const reload = (viewer: (typeof viewers)[number]) => {
    const first = Math.max(0, newest - WINDOW + 1);
    viewer.known = newest;
    viewer.engine.registerStream({ streamKey: LIVE, isLive: true, segments: Array.from({ length: newest - first + 1 }, (_, i) => refFor(first + i)) });
  };
  for (const viewer of viewers) reload(viewer); // joins the swarm
  // What a tracker's announce response tells each peer: the swarm's size.
  if (reportSwarmSize) for (const viewer of viewers) viewer.signaling.events!.swarmSize?.(peers);
  // The partial mesh: each peer links to a few random others.
  const linked = new Set<string>();
  let links = 0;
  for (let a = 0; a < peers; a++) {
    for (let made = 0, tries = 0; made < linksPerPeer && tries < 100; tries++) {
      const b = Math.floor(rand() * peers);
      const key = a < b ? `${a}-${b}` : `${b}-${a}`;
      if (b === a || linked.has(key)) continue;
      linked.add(key);
      made++;
      links++;
      const [mine, theirs] = linkTransports(clock, peerId(a + 1), peerId(b + 1), { bytesPerS: 1_000_000, latencyMs: 20 });
      viewers[a]!.signaling.events!.peer(mine);
      viewers[b]!.signaling.events!.peer(theirs);
    }
  }
  const stepMs = 100;
  const startMs = clock.now();
  const firstMeasured = newest + 2;
  for (let t = 0; t < segments * SEGMENT_S * 1000; t += stepMs) {
    if (t % (SEGMENT_S * 1000) === 0 && t > 0) publish();
    for (const viewer of viewers) {
      // hls.js reloads a live playlist about once per target duration, each viewer at its own phase.
      if ((t + viewer.phaseMs) % (SEGMENT_S * 1000) === 0) reload(viewer);
      const edgeS = (viewer.known + 1) * SEGMENT_S;
      const positionS = (12 - behind) * SEGMENT_S + (clock.now() - startMs) / 1000;
      viewer.engine.setPlayback({ positionS, rate: 1, bufferedUntilS: edgeS, isLive: true, liveEdgeS: edgeS, targetLatencyS: behind * SEGMENT_S });
      viewer.next ??= Math.floor(positionS / SEGMENT_S);
      while (viewer.next <= viewer.known) {
        const ref = refFor(viewer.next++);
        if (ref.sequence < firstMeasured) {
          void viewer.engine.loadSegment(ref).result.catch(() => {});
          continue;
        }
        const deadlineS = ref.startS;
        void viewer.engine.loadSegment(ref).result.then(
          () => {
            if (startMs / 1000 + deadlineS - (12 - behind) * SEGMENT_S < clock.now() / 1000) viewer.late++;
          },
          () => viewer.late++,
        );
      }
    }
    await clock.advance(stepMs);
  }
  await clock.advance(5000);
  const fetchesPerSegment: number[] = [];
  for (let sequence = firstMeasured; sequence <= newest - 3; sequence++) fetchesPerSegment.push(origin.requestsFor(refFor(sequence).url).length);
  return {
    fetchesPerSegment,
    meanFetches: fetchesPerSegment.reduce((sum, n) => sum + n, 0) / fetchesPerSegment.length,
    meanDegree: (2 * links) / peers,
    late: viewers.reduce((sum, viewer) => sum + viewer.late, 0),
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
});
