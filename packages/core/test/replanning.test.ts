// How often the engine plans: each plan snapshots the streams, so a plan per event (every playback
// report, every availability message) dominated the swarm simulator's profile at 1,000 viewers.
// Plans run on the engine's clock: an idle engine without peers fires a timer only to plan.
import { describe, expect, it } from 'vitest';
import { ShoalEngine } from '../src/index.js';
import type { PlaybackReport } from '../src/types.js';
import { enginesDestroyedAfterEach, FakeOrigin, makeSegments } from './fakes.js';
import { VirtualClock } from '@shoal/sim/kit';

const VOD = 'https://origin.test/vod.m3u8|shoal1|bw=800000';
const vodAt = (positionS: number, rate = 1): PlaybackReport => ({ positionS, rate, bufferedUntilS: positionS + 30, isLive: false });

const engines = enginesDestroyedAfterEach();

describe('re-planning', () => {
  it('plans at most once a second on steady playback reports, and at once after a seek or a pause', async () => {
    const clock = new VirtualClock();
    const origin = new FakeOrigin(clock);
    const refs = makeSegments(origin, VOD, 10);
    const engine = new ShoalEngine({}, { clock, http: origin });
    engines.push(engine);
    engine.registerStream({ streamKey: VOD, isLive: false, segments: refs });
    engine.setPlayback(vodAt(0));
    await clock.advance(100);
    const before = clock.eventsRun;
    // hls.js-like timeupdate: every 250 ms, exactly where playback extrapolates to.
    for (let t = 250; t <= 10_000; t += 250) {
      await clock.advance(250);
      engine.setPlayback(vodAt(t / 1000));
    }
    await clock.advance(0);
    const steady = clock.eventsRun - before;
    expect(steady).toBeGreaterThanOrEqual(9);
    expect(steady).toBeLessThanOrEqual(11);
    for (const jump of [vodAt(60), vodAt(60.1, 0)]) {
      const fired = clock.eventsRun;
      engine.setPlayback(jump);
      await clock.advance(0);
      expect(clock.eventsRun - fired).toBe(1);
    }
  });
});
