import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { SHAPED_COUNTERS, runTestSwarm } from './swarm-run.js';

// A segment from several senders, in real Chromium over shaped links: each viewer's uplink is
// 0.44x the stream (the realistic profile), too slow for one sender to bring a segment as fast as
// it plays. The engine's log (the runner's trace) says, for each segment it completed, how many
// peers sent bytes of it; the copies were verified before the player got them (a peer whose range
// was wrong would be banned and the segment fetched again).
test('on uplinks below the bitrate, viewers get segments from two or more senders at once, verified, and play as smoothly as HTTP alone', async () => {
  test.setTimeout(330_000);
  const report = await runTestSwarm({
    name: 'multi-sender',
    scenario: 'live-normal',
    peers: 4,
    durationS: 60,
    engines: ['http', 'shoal'],
    network: 'realistic',
    trace: true,
    countersUnchecked: SHAPED_COUNTERS,
  });
  const [baseline, shoal] = report.runs;
  expect(shoal!.engine).toBe('shoal');
  expect(report.validity?.valid, report.validity?.reason).toBe(true);
  // "#12 complete: 171000 bytes P2P from 2 peers, 0 HTTP" in the Shoal viewers' engine logs.
  const traceDir = join(test.info().outputPath('multi-sender'), 'trace');
  const senders = readdirSync(traceDir)
    .filter((name) => name.startsWith('shoal-'))
    .flatMap((name) => [...readFileSync(join(traceDir, name), 'utf8').matchAll(/complete: (\d+) bytes P2P from (\d+) peers/g)])
    .filter((match) => Number(match[1]) > 0)
    .map((match) => Number(match[2]));
  const fromSeveral = senders.filter((count) => count >= 2).length;
  console.log(`segments with P2P bytes: ${senders.length}, from 2+ senders: ${fromSeveral}; offload ${(100 * shoal!.offload!).toFixed(1)}%`);
  expect(fromSeveral).toBeGreaterThan(0);
  // Every viewer that sent bytes sent them to someone who played them: several uploaders at work.
  expect(shoal!.perPeer.filter((peer) => peer.uploadedBytes > 0).length).toBeGreaterThanOrEqual(2);
  // Every segment handed to a player was the origin's (checked by the page against the SHA-256 manifest).
  if (shoal!.verification) expect(shoal!.verification.mismatched).toBe(0);
  expect(shoal!.integrity).toBe(true);
  // Not asserted: the offload. On these links it is near zero in browsers today (BENCHMARKS.md, N7),
  // and what this test is about is the transfer from several senders, verified, without stalls.
  expect(shoal!.stalls.count).toBeLessThanOrEqual(baseline!.stalls.count + 1);
});
