import { expect, test } from '@playwright/test';
import { runSwarm } from '../src/swarm/run-swarm.js';
import { swarmLog } from './swarm-log.js';

// Small swarms of real Chromium viewers through the real origin and Shoal's tracker process.
// Floors on offload and ceilings on stalls, with margin for a busy 2-core machine; the
// figures themselves are benchmarks (npm run swarm), not assertions.
test('a 4-viewer live-normal Shoal swarm offloads at least half the ideal, beside an HTTP-only baseline', async () => {
  test.setTimeout(330_000);
  const report = await runSwarm({
    scenario: 'live-normal',
    peers: 4,
    durationS: 60,
    engines: ['http', 'shoal'],
    outDir: test.info().outputPath('live-normal'),
    log: swarmLog,
  });
  const [baseline, shoal] = report.runs;
  expect(baseline!.engine).toBe('http');
  expect(shoal!.engine).toBe('shoal');
  expect(report.validity?.valid, report.validity?.reason).toBe(true);
  for (const run of report.runs) {
    expect(run.startupMs.notStarted, `${run.engine}: viewers that never played`).toBe(0);
    expect(run.perPeer.filter((peer) => peer.fatalError).map((peer) => `${peer.id}: ${peer.fatalError}`)).toEqual([]);
    expect(run.countersAgree, `${run.engine}: viewers' HTTP counters vs origin, off by ${run.countersDifference}`).toBe(true);
  }
  expect(shoal!.clientP2pBytes).toBeGreaterThan(0);
  expect(shoal!.offload!).toBeGreaterThanOrEqual(0.5 * shoal!.ideal);
  expect(shoal!.stalls.count).toBeLessThanOrEqual(baseline!.stalls.count + 1);
});

test('a 4-viewer VOD Shoal swarm offloads at least half the ideal', async () => {
  test.setTimeout(180_000);
  const report = await runSwarm({
    scenario: 'vod',
    peers: 4,
    durationS: 45,
    engines: ['shoal'],
    outDir: test.info().outputPath('vod'),
    log: swarmLog,
  });
  expect(report.startupMs.notStarted).toBe(0);
  expect(report.perPeer.filter((peer) => peer.fatalError).map((peer) => `${peer.id}: ${peer.fatalError}`)).toEqual([]);
  expect(report.countersAgree, `viewers' HTTP counters vs origin, off by ${report.countersDifference}`).toBe(true);
  expect(report.offload!).toBeGreaterThanOrEqual(0.5 * report.ideal);
  expect(report.stalls.count).toBeLessThanOrEqual(1);
});

test('p2p-media-loader viewers exchange segments through our tracker', async () => {
  test.setTimeout(150_000);
  const report = await runSwarm({
    scenario: 'vod',
    peers: 3,
    durationS: 30,
    engines: ['p2p-media-loader'],
    outDir: test.info().outputPath('p2p-media-loader'),
    log: swarmLog,
  });
  expect(report.engine).toBe('p2p-media-loader');
  expect(report.hlsWorker).toBe(false);
  expect(report.startupMs.notStarted).toBe(0);
  const totals = report.trackerStats?.totals as { offersRelayed?: number; answersRelayed?: number } | undefined;
  expect(totals?.answersRelayed ?? 0).toBeGreaterThan(0);
  expect(report.clientP2pBytes).toBeGreaterThan(0);
  expect(report.clientUploadedBytes).toBeGreaterThan(0);
});
