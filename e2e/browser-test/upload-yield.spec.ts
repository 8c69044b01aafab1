import { expect, test } from '@playwright/test';
import { runTestSwarm, SHAPED_COUNTERS } from './swarm-run.js';

// Issue 17: on a home-sized uplink, uploads must not cost the viewer its own playback. Each
// viewer is its own Chromium on a shaped link (tc tbf, the uplink's router buffer 600 ms):
// uplink 1.2x the stream (`critical`), 2 Mbit/s down, where every uploader can pass on what it
// plays and an engine that uploads as fast as SCTP lets it fills the router's queue, so that its
// own HTTP requests and acknowledgements wait behind it. HTTP alone runs first on the same links.
// Floors, not timings: stall time may exceed HTTP's by a margin a busy 2-core machine needs.
test('on uplinks that saturate, Shoal stalls no more than HTTP alone, and still uploads', async () => {
  test.setTimeout(300_000);
  const report = await runTestSwarm({
    name: 'critical',
    scenario: 'live-normal',
    peers: 4,
    durationS: 50,
    engines: ['http', 'shoal'],
    network: 'critical',
    countersUnchecked: SHAPED_COUNTERS,
  });
  const [http, shoal] = report.runs as [(typeof report.runs)[0], (typeof report.runs)[0]];
  const summary = (run: typeof http) =>
    `${run.engine}: stalls ${run.stalls.count} / ${run.stalls.seconds} s, uploaded ${run.clientUploadedBytes} B, offload ${run.offload}`;
  console.log(`${summary(http)}; ${summary(shoal)}`);
  expect(report.network!.shapingHeld, JSON.stringify(report.network!.viewers)).toBe(true);
  // The swarm did use its uplinks: without uploads there would be nothing to yield.
  expect(shoal.clientUploadedBytes).toBeGreaterThan(0);
  // Playback: no more stall time than HTTP alone on the same links, give or take 1.5 s in all.
  expect(shoal.stalls.seconds, summary(shoal)).toBeLessThanOrEqual(http.stalls.seconds + 1.5);
});
