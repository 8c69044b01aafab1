// Pins the flow network's rates on a small case, so that a faster rate recomputation cannot
// change them silently. The expected values are what the first implementation (recompute every
// downlink the changed flow's sender touches, water-filling each) computed, checked by hand
// where noted; every later implementation must give the same to within a nanosecond-scale
// rounding tolerance.
import { describe, expect, it } from 'vitest';
import { FlowNetwork, Pipe, SimHost, VirtualClock } from '../src/kit.js';

const host = (id: string, upBytesPerS: number, downBytesPerS: number) => new SimHost(id, { upBytesPerS, downBytesPerS, latencyMs: 0 });

/**
 * Two senders with finite uplinks (a: 1000 B/s, b: 600 B/s), an origin capped per connection,
 * and two receivers (d: 800 B/s down, e: unlimited), with flows starting, queueing, ending, being
 * cleared, and a sender's uplink cut and restored. Returns every unit's completion time and each
 * flow's backlog at sample times, in time order.
 */
async function scenario(): Promise<string[]> {
  const clock = new VirtualClock();
  const network = new FlowNetwork(clock);
  const a = host('a', 1000, Infinity);
  const b = host('b', 600, Infinity);
  const c = host('c', 300, Infinity);
  const d = host('d', 0, 800);
  const e = host('e', 0, Infinity);
  const log: string[] = [];
  const pipes: Record<string, Pipe> = {
    ad: new Pipe(network, a, d),
    ae: new Pipe(network, a, e),
    bd: new Pipe(network, b, d),
    be: new Pipe(network, b, e),
    ce: new Pipe(network, c, e),
    od: new Pipe(network, undefined, d),
    oe: new Pipe(network, undefined, e, 400),
  };
  const push = (atMs: number, name: string, bytes: number) =>
    clock.at(atMs, () => pipes[name]!.push(bytes, () => log.push(`${clock.now().toFixed(6)} ${name} sent ${bytes}`)));
  push(0, 'ad', 2000); // a's uplink shared with ae from the start
  push(0, 'ae', 3000);
  push(0, 'ae', 500); // queued behind the first unit on the same flow
  push(500, 'bd', 1000); // d's downlink now shared
  push(1000, 'od', 1500); // an origin download on d: water-filling above the capped peers
  push(1200, 'oe', 900); // the origin's per-connection cap
  push(1500, 'be', 700); // b's uplink shared between d and e
  push(2000, 'ce', 800);
  clock.at(2500, () => {
    c.capacity.upBytesPerS = 0;
    network.capacityChanged(c);
  });
  clock.at(4000, () => {
    c.capacity.upBytesPerS = 300;
    network.capacityChanged(c);
  });
  push(3000, 'bd', 2000);
  clock.at(3500, () => log.push(`${clock.now().toFixed(6)} bd cleared ${pipes.bd!.clear().toFixed(6)}`));
  push(3600, 'ad', 1200);
  for (let atMs = 250; atMs <= 6000; atMs += 250) {
    clock.at(atMs, () => {
      const backlogs = Object.entries(pipes).map(([name, pipe]) => `${name}=${pipe.backlogBytes.toFixed(6)}`);
      log.push(`${clock.now().toFixed(6)} backlog ${backlogs.join(' ')}`);
    });
  }
  await clock.runUntil(60_000);
  return log;
}

/** Computed by the first implementation (commit 3fe5e99). */
const PINNED = [
  '250.000000 backlog ad=1875.000000 ae=3375.000000 bd=0.000000 be=0.000000 ce=0.000000 od=0.000000 oe=0.000000',
  '500.000000 backlog ad=1750.000000 ae=3250.000000 bd=1000.000000 be=0.000000 ce=0.000000 od=0.000000 oe=0.000000',
  '750.000000 backlog ad=1650.000000 ae=3125.000000 bd=900.000000 be=0.000000 ce=0.000000 od=0.000000 oe=0.000000',
  '1000.000000 backlog ad=1550.000000 ae=3000.000000 bd=800.000000 be=0.000000 ce=0.000000 od=1500.000000 oe=0.000000',
  '1250.000000 backlog ad=1483.333333 ae=2875.000000 bd=733.333333 be=0.000000 ce=0.000000 od=1433.333333 oe=880.000000',
  '1500.000000 backlog ad=1416.666667 ae=2750.000000 bd=666.666667 be=700.000000 ce=0.000000 od=1366.666667 oe=780.000000',
  '1750.000000 backlog ad=1350.000000 ae=2625.000000 bd=600.000000 be=625.000000 ce=0.000000 od=1300.000000 oe=680.000000',
  '2000.000000 backlog ad=1283.333333 ae=2500.000000 bd=533.333333 be=550.000000 ce=800.000000 od=1233.333333 oe=580.000000',
  '2250.000000 backlog ad=1216.666667 ae=2375.000000 bd=466.666667 be=475.000000 ce=725.000000 od=1166.666667 oe=480.000000',
  '2500.000000 backlog ad=1150.000000 ae=2250.000000 bd=400.000000 be=400.000000 ce=650.000000 od=1100.000000 oe=380.000000',
  '2750.000000 backlog ad=1083.333333 ae=2125.000000 bd=333.333333 be=325.000000 ce=650.000000 od=1033.333333 oe=280.000000',
  '3000.000000 backlog ad=1016.666667 ae=2000.000000 bd=2266.666667 be=250.000000 ce=650.000000 od=966.666667 oe=180.000000',
  '3250.000000 backlog ad=950.000000 ae=1875.000000 bd=2200.000000 be=175.000000 ce=650.000000 od=900.000000 oe=80.000000',
  '3450.000000 oe sent 900',
  '3500.000000 bd cleared 2133.333333',
  '3500.000000 backlog ad=883.333333 ae=1750.000000 bd=0.000000 be=100.000000 ce=650.000000 od=833.333333 oe=0.000000',
  '3666.666667 be sent 700',
  '3750.000000 backlog ad=1983.333333 ae=1625.000000 bd=0.000000 be=0.000000 ce=650.000000 od=733.333333 oe=0.000000',
  '4000.000000 backlog ad=1883.333333 ae=1500.000000 bd=0.000000 be=0.000000 ce=650.000000 od=633.333333 oe=0.000000',
  '4250.000000 backlog ad=1783.333333 ae=1375.000000 bd=0.000000 be=0.000000 ce=575.000000 od=533.333333 oe=0.000000',
  '4500.000000 backlog ad=1683.333333 ae=1250.000000 bd=0.000000 be=0.000000 ce=500.000000 od=433.333333 oe=0.000000',
  '4750.000000 backlog ad=1583.333333 ae=1125.000000 bd=0.000000 be=0.000000 ce=425.000000 od=333.333333 oe=0.000000',
  '5000.000000 backlog ad=1483.333333 ae=1000.000000 bd=0.000000 be=0.000000 ce=350.000000 od=233.333333 oe=0.000000',
  '5250.000000 backlog ad=1383.333333 ae=875.000000 bd=0.000000 be=0.000000 ce=275.000000 od=133.333333 oe=0.000000',
  '5500.000000 backlog ad=1283.333333 ae=750.000000 bd=0.000000 be=0.000000 ce=200.000000 od=33.333333 oe=0.000000',
  '5583.333333 od sent 1500',
  '5683.333333 ad sent 2000',
  '5750.000000 backlog ad=1166.666667 ae=625.000000 bd=0.000000 be=0.000000 ce=125.000000 od=0.000000 oe=0.000000',
  '6000.000000 backlog ad=1041.666667 ae=500.000000 bd=0.000000 be=0.000000 ce=50.000000 od=0.000000 oe=0.000000',
  '6000.000000 ae sent 3000',
  '6166.666667 ce sent 800',
  '7000.000000 ae sent 500',
  '7677.083333 ad sent 1200',
];

/** Splits a log line into its words and numbers, the numbers to compare with a tolerance. */
const parts = (line: string) => line.split(/[ =]/).map((word) => (/^-?[\d.]+$/.test(word) ? Number(word) : word));

describe('FlowNetwork rates, pinned', () => {
  it('gives the same completion times and backlogs as the first implementation', async () => {
    const log = await scenario();
    expect(log).toHaveLength(PINNED.length);
    log.forEach((line, i) => {
      const expected = parts(PINNED[i]!);
      const actual = parts(line);
      expect(actual.map((part) => typeof part), line).toEqual(expected.map((part) => typeof part));
      actual.forEach((part, k) => {
        if (typeof part === 'number') expect(part, line).toBeCloseTo(expected[k] as number, 5);
        else expect(part, line).toBe(expected[k]);
      });
    });
  });

  it('matches hand-computed rates on the first steps', async () => {
    const log = await scenario();
    // 0-500 ms: a's 1000 B/s shared by ad and ae (500 each). From 500 ms: d's 800 B/s between ad
    // and bd (400 each); from 1000 ms with od, a third each; oe capped at 400 B/s from 1200 ms.
    expect(log[1]).toBe('500.000000 backlog ad=1750.000000 ae=3250.000000 bd=1000.000000 be=0.000000 ce=0.000000 od=0.000000 oe=0.000000');
    expect(log[2]).toBe('750.000000 backlog ad=1650.000000 ae=3125.000000 bd=900.000000 be=0.000000 ce=0.000000 od=0.000000 oe=0.000000');
    expect(log[4]).toBe('1250.000000 backlog ad=1483.333333 ae=2875.000000 bd=733.333333 be=0.000000 ce=0.000000 od=1433.333333 oe=880.000000');
  });
});
