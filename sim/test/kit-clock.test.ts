import { describe, expect, it } from 'vitest';
import { EventQueue, Prng, VirtualClock } from '../src/kit.js';

describe('EventQueue', () => {
  it('pops events by time, and events at the same time in the order they were pushed', () => {
    const queue = new EventQueue();
    const order: string[] = [];
    const prng = new Prng(7);
    const times = Array.from({ length: 200 }, () => Math.floor(prng.next() * 20));
    times.forEach((atMs, i) => queue.push(atMs, () => order.push(`${atMs}:${i}`)));
    const popped: string[] = [];
    for (let event = queue.pop(); event; event = queue.pop()) {
      event.callback!();
      popped.push(order[order.length - 1]!);
    }
    const expected = times.map((atMs, i) => ({ atMs, i })).sort((a, b) => a.atMs - b.atMs || a.i - b.i).map(({ atMs, i }) => `${atMs}:${i}`);
    expect(popped).toEqual(expected);
  });
});

describe('VirtualClock', () => {
  it('runs timers at their virtual time and skips cleared ones', async () => {
    const clock = new VirtualClock();
    const seen: Array<[string, number]> = [];
    clock.setTimeout(() => seen.push(['b', clock.now()]), 200);
    const cleared = clock.setTimeout(() => seen.push(['never', clock.now()]), 100);
    clock.setTimeout(() => {
      seen.push(['a', clock.now()]);
      clock.setTimeout(() => seen.push(['a+50', clock.now()]), 50);
    }, 100);
    clock.clearTimeout(cleared);
    await clock.runUntil(1000);
    expect(seen).toEqual([['a', 100], ['a+50', 150], ['b', 200]]);
    expect(clock.now()).toBe(1000);
  });

  it('drains promise continuations before time moves on, so async code reads the instant it resumed at', async () => {
    const clock = new VirtualClock();
    const readings: number[] = [];
    clock.setTimeout(() => {
      void (async () => {
        await Promise.resolve();
        await new Promise<void>((resolve) => queueMicrotask(resolve));
        readings.push(clock.now());
        clock.setTimeout(() => readings.push(clock.now()), 10);
      })();
    }, 100);
    clock.setTimeout(() => readings.push(clock.now()), 101);
    await clock.runUntil(500);
    expect(readings).toEqual([100, 101, 110]);
  });

  it('stops the run with the exception an event threw', async () => {
    const clock = new VirtualClock();
    clock.setTimeout(() => {
      throw new Error('engine crashed');
    }, 5);
    await expect(clock.runUntil(10)).rejects.toThrow('engine crashed');
  });
});
