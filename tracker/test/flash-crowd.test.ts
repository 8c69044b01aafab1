// A flash crowd through the tracker's real message logic with its default limits: honest clients
// are never rate-limited. Each client behaves as bittorrent-tracker's Client (5 offers per
// announce, every offer answered, here instantly) in two swarms over one socket, as Shoal and
// p2p-media-loader players are; newcomers arrive at 10,000 a second, about what one tracker
// process can take in (tracker/README.md, Sizing). The figures behind the defaults come from the
// same model at larger scale (tracker/bench/flash-crowd.mjs) and from real clients in Chromium.

import { describe, expect, it } from 'vitest';
import { DEFAULT_OPTIONS } from '../src/config.js';
import { Connection } from '../src/connection.js';
import { MessageHandler } from '../src/message-handler.js';
// A plain ESM benchmark module, shared with the command that runs it at scale.
import { runFlashCrowd, worstConnection } from '../bench/flash-crowd.mjs';

interface CrowdResult {
  counters: MessageHandler['counters'];
  clients: { times: number[]; failures: number }[];
}

describe('flash crowd with the default rate limit', () => {
  it('answers every newcomer and refuses no honest client: the rate-limited counter stays 0', () => {
    const newcomers = 5000;
    const swarms = 2;
    const { counters, clients } = runFlashCrowd(
      { MessageHandler, Connection },
      { handlerOptions: DEFAULT_OPTIONS, residents: 20, newcomers, withinS: 0.5, swarms },
    ) as CrowdResult;
    const worst = worstConnection(clients, [DEFAULT_OPTIONS.messagesPerSecond]) as { max1s: number; burstNeeded: Record<number, number>; failures: number };

    expect(counters.rateLimited).toBe(0);
    expect(counters.failures).toBe(0);
    expect(counters.abusersClosed).toBe(0);
    expect(worst.failures).toBe(0);
    // It was a crowd: every newcomer announced in both swarms, nearly every offer found a peer
    // and was answered, and the busiest connection got dozens of offers within a second.
    expect(counters.announces).toBe((20 + newcomers) * swarms);
    expect(counters.answersRelayed).toBeGreaterThan(newcomers * swarms * 4.9);
    expect(worst.max1s).toBeGreaterThan(40);
    // ...and needed at most half the default burst (the margin tracker/README.md states).
    expect(worst.burstNeeded[DEFAULT_OPTIONS.messagesPerSecond]).toBeLessThanOrEqual(DEFAULT_OPTIONS.messageBurst / 2);
  });
});
