import { describe, expect, it } from 'vitest';
import { ShoalEngine, type EngineEventMap } from '../src/index.js';
import { VirtualClock } from '@shoal/sim/kit';
import { enginesDestroyedAfterEach, FakeOrigin, makeSegments, ManualSignaling, peerId } from './fakes.js';

const VOD = 'https://origin.test/vod.m3u8|shoal1|bw=800000';
const engines = enginesDestroyedAfterEach();

/** Signaling whose status the test sets, as the browser's does when trackers fail or RTCPeerConnection throws. */
class TroubledSignaling extends ManualSignaling {
  private listener: ((problem: string | undefined) => void) | undefined;
  watchStatus(listener: (problem: string | undefined) => void): void {
    this.listener = listener;
  }
  set(problem: string | undefined): void {
    this.listener?.(problem);
  }
}

function engineWith(deps: { signaling?: TroubledSignaling; p2pUnavailable?: string }, options = {}) {
  const clock = new VirtualClock();
  const origin = new FakeOrigin(clock);
  const engine = new ShoalEngine(options, { clock, http: origin, ...deps });
  engines.push(engine);
  const told: EngineEventMap['p2p'][] = [];
  engine.on('p2p', (event) => told.push(event));
  return { clock, origin, engine, told };
}

describe('P2P status', () => {
  it('is unavailable with the reason the integration gave, told once after start, and segments still load over HTTP', async () => {
    const { clock, origin, engine, told } = engineWith({ p2pUnavailable: 'WEBRTC_UNAVAILABLE: this environment has no RTCPeerConnection (undefined)' });
    expect(engine.getStats()).toMatchObject({ p2p: 'unavailable', p2pReason: 'WEBRTC_UNAVAILABLE: this environment has no RTCPeerConnection (undefined)' });
    const refs = makeSegments(origin, VOD, 3);
    engine.registerStream({ streamKey: VOD, isLive: false, segments: refs });
    engine.setPlayback({ positionS: 0, rate: 1, bufferedUntilS: 0, isLive: false });
    const load = engine.loadSegment(refs[0]!);
    await clock.advance(1000);
    expect((await load.result).source).toBe('http');
    expect(told).toEqual([{ state: 'unavailable', reason: 'WEBRTC_UNAVAILABLE: this environment has no RTCPeerConnection (undefined)', verification: 'none' }]);
  });

  it('is off without signaling, and off when both directions are switched off', async () => {
    expect(engineWith({}).engine.getStats()).toMatchObject({ p2p: 'off', p2pReason: 'no tracker configured' });
    const { engine, clock, told } = engineWith({ signaling: new TroubledSignaling(peerId(1)) }, { p2pDownload: false, upload: false });
    await clock.advance(1);
    expect(engine.getStats()).toMatchObject({ p2p: 'off', p2pReason: 'p2pDownload and upload are both false' });
    expect(told).toEqual([{ state: 'off', reason: 'p2pDownload and upload are both false', verification: 'none' }]);
  });

  it("follows signaling's problems: unavailable while no tracker answers, on again once one does", async () => {
    const signaling = new TroubledSignaling(peerId(1));
    const { engine, clock, told } = engineWith({ signaling });
    await clock.advance(1);
    expect(told).toEqual([]);
    expect(engine.getStats()).toMatchObject({ p2p: 'on', p2pReason: '' });
    signaling.set('TRACKER: wss://t.test: unreachable (code 1006); reconnecting in 1.0 s');
    signaling.set('TRACKER: wss://t.test: unreachable (code 1006); reconnecting in 1.0 s');
    expect(engine.getStats()).toMatchObject({ p2p: 'unavailable', p2pReason: 'TRACKER: wss://t.test: unreachable (code 1006); reconnecting in 1.0 s' });
    signaling.set(undefined);
    expect(engine.getStats()).toMatchObject({ p2p: 'on', p2pReason: '' });
    expect(told.map(({ state }) => state)).toEqual(['unavailable', 'on']);
  });

  it('leaves no timer behind when destroyed before its first report', () => {
    const { engine, clock } = engineWith({ p2pUnavailable: 'no WebRTC' });
    engine.destroy();
    expect(clock.pending).toBe(0);
  });
});
