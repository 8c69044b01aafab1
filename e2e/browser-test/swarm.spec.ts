import { expect, test } from '@playwright/test';
import { runTestSwarm } from './swarm-run.js';

// Small swarms of real Chromium viewers through the real origin and Shoal's tracker process.
// Floors on offload and ceilings on stalls, with margin for a busy 2-core machine; the
// figures themselves are benchmarks (npm run swarm), not assertions.
test('a 4-viewer live-normal Shoal swarm offloads at least half the ideal, beside an HTTP-only baseline', async () => {
  test.setTimeout(330_000);
  const report = await runTestSwarm({ name: 'live-normal', scenario: 'live-normal', peers: 4, durationS: 60, engines: ['http', 'shoal'] });
  const [baseline, shoal] = report.runs;
  expect(baseline!.engine).toBe('http');
  expect(shoal!.engine).toBe('shoal');
  expect(report.validity?.valid, report.validity?.reason).toBe(true);
  expect(shoal!.clientP2pBytes).toBeGreaterThan(0);
  expect(shoal!.offload!).toBeGreaterThanOrEqual(0.5 * shoal!.ideal);
  expect(shoal!.stalls.count).toBeLessThanOrEqual(baseline!.stalls.count + 1);
});

test('a 4-viewer VOD Shoal swarm offloads at least half the ideal', async () => {
  test.setTimeout(180_000);
  const report = await runTestSwarm({ name: 'vod', scenario: 'vod', peers: 4, durationS: 45, engines: ['shoal'] });
  expect(report.offload!).toBeGreaterThanOrEqual(0.5 * report.ideal);
  expect(report.stalls.count).toBeLessThanOrEqual(1);
});

test('p2p-media-loader viewers exchange segments through our tracker', async () => {
  test.setTimeout(150_000);
  const report = await runTestSwarm({
    name: 'p2p-media-loader',
    scenario: 'vod',
    peers: 3,
    durationS: 30,
    engines: ['p2p-media-loader'],
    countersUnchecked: "p2p-media-loader's reported HTTP bytes miss some requests (2.9% off in BENCHMARKS.md's vod run)",
  });
  expect(report.engine).toBe('p2p-media-loader');
  expect(report.hlsWorker).toBe(false);
  const totals = report.trackerStats?.totals as { offersRelayed?: number; answersRelayed?: number } | undefined;
  expect(totals?.answersRelayed ?? 0).toBeGreaterThan(0);
  expect(report.clientP2pBytes).toBeGreaterThan(0);
  expect(report.clientUploadedBytes).toBeGreaterThan(0);
});
