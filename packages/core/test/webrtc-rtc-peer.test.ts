import { describe, expect, it } from 'vitest';
import { RtcPeer } from '../src/webrtc/rtc-peer.js';
import type { Clock } from '../src/types.js';
import { FakeRTCPeerConnection } from './webrtc-fake-rtc.js';

const clock: Clock = {
  now: () => performance.now(),
  setTimeout: (callback, delayMs) => setTimeout(callback, delayMs),
  clearTimeout: (timer) => clearTimeout(timer as ReturnType<typeof setTimeout>),
};

function pair() {
  const opened: RtcPeer[] = [];
  const closed: [RtcPeer, string, boolean][] = [];
  const options = {
    RTCPeerConnection: FakeRTCPeerConnection as unknown as typeof RTCPeerConnection,
    iceServers: [],
    iceGatheringTimeoutMs: 1000,
    bufferedAmountLowThreshold: 1024,
    clock,
    onOpen: (peer: RtcPeer) => opened.push(peer),
    onClose: (peer: RtcPeer, reason: string, failed: boolean) => closed.push([peer, reason, failed]),
  };
  return { offerer: new RtcPeer(true, options), answerer: new RtcPeer(false, options), opened, closed };
}

async function connect() {
  const peers = pair();
  const answer = await peers.answerer.acceptOffer(await peers.offerer.createOffer());
  await peers.offerer.acceptAnswer(answer);
  await new Promise((resolve) => setTimeout(resolve, 20));
  expect(peers.opened).toHaveLength(2);
  const channelOf = (peer: RtcPeer) => (peer as unknown as { channel: import('./webrtc-fake-rtc.js').FakeDataChannel }).channel;
  return { ...peers, channelOf };
}

describe('RtcPeer (the PeerTransport over a data channel)', () => {
  it('passes bufferedAmount through and reports drain from bufferedamountlow', async () => {
    const { offerer, channelOf } = await connect();
    const drains: number[] = [];
    offerer.setEvents({ message: () => {}, close: () => {}, drain: () => drains.push(offerer.bufferedAmount) });
    const channel = channelOf(offerer);
    channel.bufferedAmount = 300_000;
    expect(offerer.bufferedAmount).toBe(300_000);
    channel.bufferedAmount = 512;
    channel.onbufferedamountlow?.({});
    expect(drains).toEqual([512]);
  });

  it('closes on a text message (protocol violation) and tells both its owner and the engine, once', async () => {
    const { offerer, answerer, closed, channelOf } = await connect();
    const reasons: (string | undefined)[] = [];
    answerer.setEvents({ message: () => {}, close: (reason) => reasons.push(reason), drain: () => {} });
    channelOf(answerer).onmessage?.({ data: 'hello' });
    answerer.close();
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toContain('text message');
    expect(closed.filter(([peer]) => peer === answerer)).toHaveLength(1);
    expect(closed.find(([peer]) => peer === answerer)![2]).toBe(true);
    // The other side learns it from its channel closing.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(offerer.closed).toBe(true);
  });

  it('ignores sends on a channel that is not open instead of throwing', () => {
    const { offerer } = pair();
    expect(() => offerer.send(new Uint8Array([1]))).not.toThrow();
    offerer.close();
    expect(() => offerer.send(new Uint8Array([1]))).not.toThrow();
    expect(offerer.bufferedAmount).toBe(0);
  });

  it('reports a close that happened before setEvents when the engine installs its handlers', async () => {
    const { offerer } = await connect();
    offerer.close();
    const reasons: (string | undefined)[] = [];
    offerer.setEvents({ message: () => {}, close: (reason) => reasons.push(reason), drain: () => {} });
    expect(reasons).toEqual(['closed locally']);
  });
});
