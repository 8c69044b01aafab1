// A player that waits for peers until the last moment HTTP can make it must not meet, at that
// moment, an origin in trouble: after a failed origin request, it stops waiting earlier for a while. Engine on the virtual clock, a live stream, one connected peer that has nothing.
import { describe, expect, it } from 'vitest';
import { ShoalEngine } from '../src/index.js';
import { PROTOCOL_VERSION, encode } from '../src/wire/peer-protocol.js';
import { ORIGIN_TROUBLE_MARGIN_MS } from '../src/transfers/origin-throughput.js';
import { enginesDestroyedAfterEach, FakeOrigin, makeSegments, ManualSignaling, peerId, UNPACED } from './fakes.js';
import { VirtualClock, linkTransports } from '@shoal/sim/kit';

const LIVE = 'https://origin.test/live.m3u8|shoal1|bw=800000';
const engines = enginesDestroyedAfterEach();

async function liveWithOnePeer() {
  const clock = new VirtualClock();
  const origin = new FakeOrigin(clock);
  const signaling = new ManualSignaling(peerId(1));
  const engine = new ShoalEngine({ ...UNPACED }, { clock, http: origin, signaling });
  engines.push(engine);
  const refs = makeSegments(origin, LIVE, 12);
  engine.registerStream({ streamKey: LIVE, isLive: true, segments: refs });
  engine.setActiveStream(LIVE);
  engine.setPlayback({ positionS: 0, rate: 1, bufferedUntilS: 2, isLive: true, liveEdgeS: 24, targetLatencyS: 10 });
  const [mine, theirs] = linkTransports(clock, peerId(1), peerId(2), { bytesPerS: 1e6, latencyMs: 5 });
  theirs.setEvents({ message: () => {}, close: () => {}, drain: () => {} });
  signaling.events!.peer(mine);
  theirs.send(encode({ type: 'handshake', version: PROTOCOL_VERSION, uploads: true }));
  theirs.send(encode({ type: 'availability', firstSequence: 0, states: [] }));
  await clock.advance(100);
  // Learn the origin's throughput from two good transfers.
  for (const ref of refs.slice(0, 2)) {
    const load = engine.loadSegment(ref);
    await clock.advance(1000);
    await load.result;
  }
  return { clock, origin, engine, refs };
}

/** How long after it was asked for, a segment (waited for from peers) went to the origin. */
async function httpStartAfterMs(t: Awaited<ReturnType<typeof liveWithOnePeer>>, index: number): Promise<number> {
  const ref = t.refs[index]!;
  const askedMs = t.clock.now();
  const load = t.engine.loadSegment(ref);
  while (!t.origin.requests.some((request) => request.url === ref.url)) await t.clock.advance(50);
  const startedMs = t.origin.requests.find((request) => request.url === ref.url)!.atMs;
  await t.clock.advance(2000);
  await load.result;
  return startedMs - askedMs;
}

describe('origin in trouble', () => {
  it('starts HTTP for a segment it waits for from peers earlier after the origin failed a request', async () => {
    const calm = await liveWithOnePeer();
    const calmMs = await httpStartAfterMs(calm, 6);
    const troubled = await liveWithOnePeer();
    // The origin fails a request (404 here; a 503 burst alike).
    troubled.origin.files.delete(troubled.refs[2]!.url);
    const failed = troubled.engine.loadSegment(troubled.refs[2]!).result.catch((error: unknown) => error);
    // Past the segment's deadline (4 s): it waits for peers until HTTP must start, then fails.
    await troubled.clock.advance(2000);
    expect(await failed).toMatchObject({ code: 'HTTP_STATUS' });
    const troubledMs = await httpStartAfterMs(troubled, 6);
    expect(calmMs - troubledMs).toBeGreaterThanOrEqual(ORIGIN_TROUBLE_MARGIN_MS - 600);
  });
});
