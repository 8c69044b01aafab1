import { describe, expect, it } from 'vitest';
import { UplinkDelay } from '../src/upload/uplink-delay.js';

/** Three answered pings a quarter second apart, no queue (one-way 1000 ms with the clock offset, round trip 20 ms). */
function measured(peers: string[]): { delay: UplinkDelay; nowMs: number } {
  const delay = new UplinkDelay();
  let nowMs = 0;
  for (let i = 0; i < 3; i++) {
    for (const peer of peers) {
      expect(delay.ping(peer, nowMs)).toBeUndefined();
      delay.pong(peer, 1000, 20, nowMs + 20);
    }
    nowMs += 250;
  }
  return { delay, nowMs };
}

describe('uplink delay', () => {
  it('reads the rise of the one-way delay over its minimum, agreed over the peers', () => {
    const { delay, nowMs } = measured(['a', 'b', 'c']);
    expect(delay.pong('a', 1300, 320, nowMs)).toBe(0); // b and c still read no queue
    expect(delay.pong('b', 1300, 320, nowMs)).toBe(300);
  });

  it('counts a pong that is late beyond the shortest round trip as a reading of at least that much queue', () => {
    const { delay, nowMs } = measured(['a']);
    expect(delay.ping('a', nowMs)).toBeUndefined(); // answered so far
    // No pong for a second: the queue holds it back.
    expect(delay.ping('a', nowMs + 1000)).toBe(980);
    expect(delay.ping('a', nowMs + 2000)).toBe(1980);
    // The pong comes and says what the queue was.
    expect(delay.pong('a', 3000, 2020, nowMs + 2020)).toBe(2000);
    expect(delay.ping('a', nowMs + 2250)).toBeUndefined();
  });

  it('does not let one peer that never answers set the delay alone', () => {
    const { delay, nowMs } = measured(['a', 'b', 'silent']);
    delay.ping('silent', nowMs);
    delay.ping('a', nowMs + 100);
    delay.pong('a', 1000, 20, nowMs + 120);
    delay.ping('b', nowMs + 100);
    delay.pong('b', 1000, 20, nowMs + 120);
    // silent's ping is a second late, a's and b's readings are fresh and say no queue.
    expect(delay.ping('silent', nowMs + 1000)).toBe(0);
  });

  it('forgets a peer', () => {
    const { delay, nowMs } = measured(['a']);
    delay.ping('a', nowMs);
    delay.forget('a');
    expect(delay.ping('a', nowMs + 1000)).toBeUndefined();
  });
});
