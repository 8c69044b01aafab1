import { describe, expect, it } from 'vitest';
import { BROWSER_WIRE_OVERHEAD, ChannelLedger, FlowNetwork, Pipe, Prng, SimHost, SimOrigin, VirtualClock, connectHosts } from '../src/kit.js';

const host = (id: string, upBytesPerS: number, downBytesPerS = Infinity, latencyMs = 0) => new SimHost(id, { upBytesPerS, downBytesPerS, latencyMs });

describe('FlowNetwork', () => {
  it('shares an uplink fairly between concurrent flows and gives the whole link back when one ends', async () => {
    const clock = new VirtualClock();
    const network = new FlowNetwork(clock);
    const sender = host('s', 1000);
    const done: Record<string, number> = {};
    new Pipe(network, sender, host('a', 0)).push(1000, () => (done.a = clock.now()));
    new Pipe(network, sender, host('b', 0)).push(3000, () => (done.b = clock.now()));
    await clock.runUntil(10_000);
    // Both at 500 B/s until a finishes at 2 s (1000 B); b has 2000 B left, alone at 1000 B/s: 4 s.
    expect(done.a).toBeCloseTo(2000, 6);
    expect(done.b).toBeCloseTo(4000, 6);
  });

  it('caps a flow at the receiver\'s share of its downlink', async () => {
    const clock = new VirtualClock();
    const network = new FlowNetwork(clock);
    const receiver = host('r', 0, 1000);
    const done: number[] = [];
    new Pipe(network, host('x', 10_000), receiver).push(1000, () => done.push(clock.now()));
    new Pipe(network, undefined, receiver).push(1000, () => done.push(clock.now()));
    await clock.runUntil(10_000);
    expect(done[0]).toBeCloseTo(2000, 6);
    expect(done[1]).toBeCloseTo(2000, 6);
  });

  it('stops a flow whose uplink is cut and resumes it when capacity returns', async () => {
    const clock = new VirtualClock();
    const network = new FlowNetwork(clock);
    const sender = host('s', 1000);
    let doneAt = -1;
    new Pipe(network, sender, host('r', 0)).push(2000, () => (doneAt = clock.now()));
    clock.setTimeout(() => {
      sender.capacity.upBytesPerS = 0;
      network.capacityChanged(sender);
    }, 500);
    clock.setTimeout(() => {
      sender.capacity.upBytesPerS = 1000;
      network.capacityChanged(sender);
    }, 5500);
    await clock.runUntil(20_000);
    expect(doneAt).toBeCloseTo(7000, 6); // 500 B before the cut, 1500 B after it ends
  });
});

describe('simulated data channel', () => {
  const dataMessage = (sequence: number, payloadBytes: number) => {
    const bytes = new Uint8Array(13 + payloadBytes);
    bytes[0] = 0x05;
    new DataView(bytes.buffer).setUint32(1, sequence);
    return bytes;
  };

  it('delivers in order after the link latency, counts bufferedAmount and fires drain below the low-water mark', async () => {
    const clock = new VirtualClock();
    const network = new FlowNetwork(clock);
    const ledger = new ChannelLedger();
    const [a, b] = connectHosts(network, ledger, { host: host('a', 100_000, Infinity, 10), peerId: 'a' }, { host: host('b', 0, Infinity, 15), peerId: 'b' });
    const arrivals: Array<[number, number]> = [];
    let drains = 0;
    a.setEvents({ message: () => {}, close: () => {}, drain: () => drains++ });
    b.setEvents({ message: (data) => arrivals.push([data.length, clock.now()]), close: () => {}, drain: () => {} });
    for (let i = 0; i < 10; i++) a.send(dataMessage(1, 16 * 1024 - 13));
    expect(a.bufferedAmount).toBe(10 * 16 * 1024);
    await clock.runUntil(10_000);
    expect(arrivals).toHaveLength(10);
    // 16 KiB at 100 kB/s is 163.84 ms per message, plus 25 ms latency.
    arrivals.forEach(([, atMs], i) => expect(atMs).toBeCloseTo(((i + 1) * 16384 * 1000) / 100_000 + 25, 6));
    expect(a.bufferedAmount).toBe(0);
    expect(drains).toBe(1);
    expect(ledger.sent).toBe(ledger.received);
  });

  it('accounts every payload byte: received, received after a cancel, or dropped when the channel closes', async () => {
    const clock = new VirtualClock();
    const network = new FlowNetwork(clock);
    const ledger = new ChannelLedger();
    const [a, b] = connectHosts(network, ledger, { host: host('a', 50_000, Infinity, 5), peerId: 'a' }, { host: host('b', 50_000, Infinity, 5), peerId: 'b' });
    let closes = 0;
    a.setEvents({ message: () => {}, close: () => closes++, drain: () => {} });
    b.setEvents({ message: () => {}, close: () => closes++, drain: () => {} });
    for (let i = 0; i < 8; i++) a.send(dataMessage(7, 10_000));
    clock.setTimeout(() => b.send(Uint8Array.of(0x09, 0, 0, 0, 7)), 300); // b cancels segment 7
    clock.setTimeout(() => a.close(), 1000);
    await clock.runUntil(5000);
    expect(ledger.sent).toBe(80_000);
    expect(ledger.received).toBeGreaterThan(0);
    expect(ledger.cancelled).toBeGreaterThan(0);
    expect(ledger.dropped).toBeGreaterThan(0);
    expect(ledger.received + ledger.cancelled + ledger.dropped).toBe(ledger.sent);
    expect(closes).toBe(2);
  });
});

describe('FlowNetwork max-min sharing', () => {
  it('gives a download the downlink capacity that flows held back by slow uplinks leave unused', async () => {
    const clock = new VirtualClock();
    const network = new FlowNetwork(clock);
    const receiver = host('r', 0, 1000);
    let httpDoneAt = -1;
    // Two peers that can send only 100 B/s each, and an HTTP download from the origin.
    new Pipe(network, host('p1', 100), receiver).push(10_000, () => {});
    new Pipe(network, host('p2', 100), receiver).push(10_000, () => {});
    new Pipe(network, undefined, receiver).push(4000, () => (httpDoneAt = clock.now()));
    await clock.runUntil(1000_000);
    expect(httpDoneAt).toBeCloseTo(5000, 6); // 800 B/s, not a third of the link
  });
});

describe('a saturated uplink slows what else the host sends (bufferbloat)', () => {
  const bloated = (id: string) => new SimHost(id, { upBytesPerS: 16_000, downBytesPerS: 250_000, latencyMs: 20, uplinkQueueMs: 600 });

  it('makes a small peer message wait behind the uploads queued at the router, up to the buffer', async () => {
    const clock = new VirtualClock();
    const network = new FlowNetwork(clock);
    const ledger = new ChannelLedger();
    const sender = bloated('s');
    const [upload] = connectHosts(network, ledger, { host: sender, peerId: 's' }, { host: host('u', 0, Infinity, 20), peerId: 'u' });
    const [control, remote] = connectHosts(network, ledger, { host: sender, peerId: 's' }, { host: host('c', 0, Infinity, 20), peerId: 'c' });
    let arrivedAt = -1;
    remote.setEvents({ message: () => (arrivedAt = clock.now()), close: () => {}, drain: () => {} });
    upload.send(new Uint8Array(100_000)); // ~6 s of uplink queued
    clock.setTimeout(() => control.send(Uint8Array.of(0x03, 0, 0, 0, 1, 1)), 1000);
    await clock.runUntil(3000);
    expect(arrivedAt).toBeCloseTo(1000 + 40 + 600, 6); // latency + a full 600 ms buffer
  });

  it('slows the host\'s own HTTP download: its requests and acknowledgements wait in the queue', async () => {
    const download = async (uploading: boolean) => {
      const clock = new VirtualClock();
      const network = new FlowNetwork(clock);
      const viewer = bloated('v');
      const spec = { kind: 'vod', renditions: [{ streamKey: 'k', bitrateBitsPerS: 300_000 }], segmentDurationS: 2, sizeJitter: 0, liveWindowSize: 10, segmentCount: 4 } as const;
      const origin = new SimOrigin(clock, network, spec, { latencyMs: 10, perConnectionBytesPerS: Infinity }, new Prng(1), 10_000);
      if (uploading) new Pipe(network, viewer, host('peer', 0)).push(1_000_000, () => {});
      let doneAt = -1;
      void origin.client(viewer).fetch({ url: 'sim://origin/r0-1.ts' }).body.then(() => (doneAt = clock.now()));
      await clock.runUntil(60_000);
      return doneAt;
    };
    const idle = await download(false);
    const busy = await download(true);
    // 75 kB in slow start: the request, then windows of 14.6, 29.2 and 58.4 kB a 60 ms round trip apart, at 250 kB/s.
    expect(idle).toBeLessThan(700);
    // The request and the two acknowledgement round trips each wait behind 600 ms of the viewer's own uploads.
    expect(busy - idle).toBeGreaterThanOrEqual(3 * 600 - 100); // less what the idle case spent sending between round trips
  });
});

describe('what the wire carries besides payload (wire-overhead.ts)', () => {
  const overhead = BROWSER_WIRE_OVERHEAD;
  const silent = { message: () => {}, close: () => {}, drain: () => {} };

  it('sends each message with its packets\' headers, and the receiver acknowledges them on its own uplink', async () => {
    const clock = new VirtualClock();
    const network = new FlowNetwork(clock, overhead);
    const receiver = host('b', 100_000);
    const [a, b] = connectHosts(network, new ChannelLedger(), { host: host('a', 100_000), peerId: 'a' }, { host: receiver, peerId: 'b' });
    let arrivedAt = -1;
    a.setEvents(silent);
    b.setEvents({ ...silent, message: () => (arrivedAt = clock.now()) });
    a.send(new Uint8Array(16 * 1024).fill(0x05, 0, 1));
    await clock.runUntil(10_000);
    const packets = Math.ceil((16 * 1024) / overhead.packetPayloadBytes);
    // 16 KiB and 15 packets' headers at 100 kB/s (without the model: 163.84 ms).
    expect(arrivedAt).toBeCloseTo(((16 * 1024 + packets * overhead.packetBytes) * 1000) / 100_000, 6);
    expect(a.bufferedAmount).toBe(0);
    expect(receiver.overheadBytes).toBeCloseTo((packets / overhead.dataPacketsPerAck) * overhead.ackBytes, 6);
  });

  it('costs nothing on an idle uplink, and on a busy one delays the next data message by the headers and acknowledgements sent meanwhile', async () => {
    const arrivalOfSecond = async (withControl: boolean) => {
      const clock = new VirtualClock();
      const network = new FlowNetwork(clock, overhead);
      const sender = host('s', 10_000);
      const [data, dataRemote] = connectHosts(network, new ChannelLedger(), { host: sender, peerId: 's' }, { host: host('d', 0), peerId: 'd' });
      const [control, controlRemote] = connectHosts(network, new ChannelLedger(), { host: sender, peerId: 's' }, { host: host('c', 0), peerId: 'c' });
      const arrivals: number[] = [];
      for (const end of [data, control, controlRemote]) end.setEvents(silent);
      dataRemote.setEvents({ ...silent, message: () => arrivals.push(clock.now()) });
      if (withControl) control.send(Uint8Array.of(0x0a, 0, 0, 0, 1)); // the uplink is idle: free
      data.send(new Uint8Array(1000).fill(0x05, 0, 1));
      // While the first data message is on the wire, 20 pings of 5 bytes to the other peer.
      if (withControl) for (let i = 0; i < 20; i++) control.send(Uint8Array.of(0x0a, 0, 0, 0, 1));
      data.send(new Uint8Array(1000).fill(0x05, 0, 1));
      await clock.runUntil(10_000);
      expect(sender.overheadBytes).toBe((withControl ? 21 * overhead.packetBytes : 0) + 2 * overhead.packetBytes);
      return arrivals[1]!;
    };
    const quiet = await arrivalOfSecond(false);
    expect(quiet).toBeCloseTo((2 * (1000 + overhead.packetBytes) * 1000) / 10_000, 6);
    expect(await arrivalOfSecond(true)).toBeCloseTo(quiet + (20 * (5 + overhead.packetBytes) * 1000) / 10_000, 6);
  });

  it('sends TCP acknowledgements up the uplink for what an HTTP download brings', async () => {
    const clock = new VirtualClock();
    const network = new FlowNetwork(clock, overhead);
    const viewer = new SimHost('v', { upBytesPerS: 16_000, downBytesPerS: 250_000, latencyMs: 20 });
    const spec = { kind: 'vod', renditions: [{ streamKey: 'k', bitrateBitsPerS: 300_000 }], segmentDurationS: 2, sizeJitter: 0, liveWindowSize: 10, segmentCount: 4 } as const;
    const origin = new SimOrigin(clock, network, spec, { latencyMs: 10, perConnectionBytesPerS: Infinity }, new Prng(1), 10_000);
    const body = origin.client(viewer).fetch({ url: 'sim://origin/r0-1.ts' }).body;
    await clock.runUntil(10_000);
    const bytes = (await body).byteLength;
    expect(bytes).toBeGreaterThan(50_000);
    expect(viewer.tcpAckBytes).toBeCloseTo(bytes * overhead.httpAckShare, 3);
    expect(viewer.overheadBytes).toBe(0);
  });
});
