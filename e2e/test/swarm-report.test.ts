import { describe, expect, it } from 'vitest';
import { buildSwarmReport, summarizeRun, type RunRecord } from '../src/swarm/report.js';
import { renderReportHtml, timeTicks } from '../src/swarm/report-html.js';
import { renderReportTable } from '../src/swarm/report-table.js';
import { scenarios } from '../src/swarm/scenarios.js';
import type { EngineName, ViewerSnapshot } from '../src/swarm/viewer-snapshot.js';

const t0 = 1_795_300_000_000;
const snapshot = (fields: Partial<ViewerSnapshot>): ViewerSnapshot => ({
  engine: 'shoal',
  p2p: true,
  atMs: t0 + 40_000,
  navigationStartMs: t0,
  firstFrameMs: t0 + 800,
  stalls: [],
  errors: [],
  fatalError: null,
  httpBytes: 0,
  p2pBytes: 0,
  uploadedBytes: 0,
  peers: 2,
  deliveredBytes: 0,
  playedBytes: 0,
  playedSeconds: 39,
  currentTime: 39,
  latencySamples: [10.2, 10.4, 11.0],
  bitrateSamples: [752_400, 752_400],
  ended: false,
  workerEnabled: true,
  ...fields,
});

const record = (engine: EngineName, originBytes: number, viewers: Array<Partial<ViewerSnapshot>>): RunRecord => ({
  scenario: scenarios['live-normal']!,
  engine,
  peers: viewers.length,
  durationS: 40,
  streamUrl: 'http://127.0.0.1:1/live/master.m3u8',
  trackerUrl: 'ws://127.0.0.1:2',
  startedAtMs: t0,
  origin: { segmentBytes: originBytes, segmentRequests: 60, distinctSegmentBytes: 4_783_526 },
  viewers: viewers.map((fields, index) => ({
    id: `v${index}`,
    p2p: engine !== 'http',
    joinedAtMs: t0 + index * 1000,
    leftAtMs: null,
    endedAtMs: t0 + 40_000,
    final: snapshot({ engine, ...fields }),
  })),
  timeline: [{ tS: 40, originSegmentBytes: originBytes, deliveredBytes: 9_000_000 }],
  loadAverage: { before: 0.5, peak: 1.8 },
  trackerStats: null,
});

describe('swarm report', () => {
  const baseline = summarizeRun(
    record('http', 9_000_000, [
      { httpBytes: 3_000_000, deliveredBytes: 3_000_000, playedBytes: 2_400_000 },
      { httpBytes: 3_000_000, deliveredBytes: 3_000_000, playedBytes: 2_400_000 },
      { httpBytes: 3_000_000, deliveredBytes: 3_000_000, playedBytes: 2_400_000 },
    ]),
  );
  const shoal = summarizeRun(
    record('shoal', 4_000_000, [
      { httpBytes: 2_000_000, p2pBytes: 1_000_000, uploadedBytes: 1_500_000, deliveredBytes: 3_000_000, playedBytes: 2_400_000 },
      { httpBytes: 1_000_000, p2pBytes: 2_000_000, uploadedBytes: 1_000_000, deliveredBytes: 3_000_000, playedBytes: 2_400_000 },
      {
        httpBytes: 1_010_000,
        p2pBytes: 2_100_000,
        uploadedBytes: 600_000,
        deliveredBytes: 3_000_000,
        playedBytes: 2_400_000,
        stalls: [{ startMs: t0 + 20_000, endMs: t0 + 21_200, atS: 18 }],
        firstFrameMs: t0 + 2_000 + 1_300,
        navigationStartMs: t0 + 2_000,
      },
    ]),
  );

  it('sums the viewers and checks their counters against the origin', () => {
    expect(shoal.clientHttpBytes).toBe(4_010_000);
    expect(shoal.clientP2pBytes).toBe(5_100_000);
    expect(shoal.countersAgree).toBe(true);
    expect(shoal.countersDifference).toBeCloseTo(0.0025, 4);
    expect(shoal.offload).toBeCloseTo(1 - 4 / 9, 4);
    expect(shoal.ideal).toBeCloseTo(2 / 3, 4);
    expect(shoal.efficiency).toBeCloseTo((5 / 9) / (2 / 3), 3);
    expect(shoal.originFetchesPerSegment).toBeCloseTo(0.836, 3);
    expect(shoal.wasteBytes).toBe(600_000 + 600_000 + 710_000);
    expect(shoal.stalls).toEqual({ count: 1, seconds: 1.2, secondsPerViewerMinute: 0.615 });
    expect(shoal.startupMs).toEqual({ p50: 800, max: 1_300, notStarted: 0 });
    expect(shoal.latencyS.p50).toBe(10.4);
    expect(shoal.bitrateKbps.avg).toBe(752);
  });

  it('divides origin bytes by the distinct segments handed to at least one player, not by every segment served', () => {
    const run = summarizeRun(
      record('shoal', 600, [
        { httpBytes: 300, deliveredBytes: 200, segments: { '1:10': 100, '1:11': 100 } },
        { httpBytes: 300, deliveredBytes: 200, segments: { '1:11': 100, '1:12': 100 } },
      ]),
    );
    expect(run.distinctDeliveredSegmentBytes).toBe(300);
    expect(run.originFetchesPerSegment).toBe(2);
    expect(run.notes.join(' ')).not.toContain('did not list');
  });

  it('compares with the baseline and keeps the P2P run on top', () => {
    const report = buildSwarmReport([baseline, shoal], { machine: { cpus: 2, platform: 'linux-x64', node: 'v22' }, command: 'npm run swarm' });
    expect(report.engine).toBe('shoal');
    expect(report.originSaving).toBeCloseTo(1 - 4 / 9, 4);
    expect(report.baseline?.engine).toBe('http');
    expect(report.validity).toEqual({ valid: true, reason: 'the HTTP-only baseline played smoothly' });
    expect(report.versusBaseline).toEqual([{ engine: 'shoal', originSaving: report.originSaving, addedStalls: 1, startupDeltaMs: 0 }]);
    const html = renderReportHtml(report);
    expect(html).toContain('<svg');
    expect(html).not.toMatch(/<script|https?:\/\/(?!127\.0\.0\.1)/);
    const table = renderReportTable(report);
    expect(table).toMatch(/^shoal +56% +67% +83% +67% +83% +0\.84 +56%/m);
    expect(table).toContain('shoal: capacity bound 66.7% = the ideal (no uplink limit); offload 55.6% is 83.3% of it');
  });

  it('puts the time axes\' ticks on round steps (1, 2, 5, 10, 15, 30, 60 s, …), never on thirds of the run', () => {
    expect(timeTicks(20, 6)).toEqual([0, 5, 10, 15, 20]);
    expect(timeTicks(40, 7)).toEqual([0, 10, 20, 30, 40]);
    expect(timeTicks(85, 6)).toEqual([0, 15, 30, 45, 60, 75]);
    expect(timeTicks(90, 6)).toEqual([0, 15, 30, 45, 60, 75, 90]);
    expect(timeTicks(130, 7)).toEqual([0, 30, 60, 90, 120]);
    expect(timeTicks(3 * 3600, 6)).toEqual([0, 1800, 3600, 5400, 7200, 9000, 10800]);
    expect(timeTicks(3, 6)).toEqual([0, 1, 2, 3]);
    // The 40-s run above: both charts label 0, 10, 20, 30, 40 s (they read 0, 7, 13, 20 … before).
    const html = renderReportHtml(buildSwarmReport([baseline, shoal], { machine: { cpus: 2, platform: 'linux-x64', node: 'v22' }, command: 'npm run swarm' }));
    const labels = [...html.matchAll(/>(\d+) s<\/text>/g)].map((match) => Number(match[1]));
    expect(labels.length).toBeGreaterThan(0);
    expect(labels.filter((tS) => tS % 10 !== 0)).toEqual([]);
    expect(new Set(labels)).toEqual(new Set([0, 10, 20, 30, 40]));
  });

  it('states the capacity bound the viewers\' uplinks allow over their time in the swarm, and the offload as a share of it', () => {
    const unshaped = record('shoal', 4_000_000, [
      { httpBytes: 2_000_000, p2pBytes: 1_000_000, deliveredBytes: 3_000_000 },
      { httpBytes: 1_000_000, p2pBytes: 2_000_000, deliveredBytes: 3_000_000 },
      { httpBytes: 1_000_000, p2pBytes: 2_000_000, deliveredBytes: 3_000_000 },
    ]);
    expect(summarizeRun(unshaped)).toMatchObject({ capacityBound: 0.6667, uplinkBound: null, uplinkCapacityBytes: null, shareOfBound: 0.8333 });

    // 400 kbit/s uplinks, present 40, 39 and 38 s: 5.85 MB they could carry, for 9 MB delivered.
    const shaped = summarizeRun({ ...unshaped, viewers: unshaped.viewers.map((viewer) => ({ ...viewer, uplinkBitsPerS: 400_000 })) });
    expect(shaped).toMatchObject({ ideal: 0.6667, capacityBound: 0.65, uplinkBound: 0.65, uplinkCapacityBytes: 5_850_000, shareOfBound: 0.8547 });
    const table = renderReportTable(buildSwarmReport([shaped], { machine: { cpus: 2, platform: 'linux-x64', node: 'v22' }, command: 'npm run swarm' }));
    expect(table).toContain('shoal: capacity bound 65.0% = min(ideal 66.7%, uplinks 65.0%: 5.8 MB they could carry while present / 9.0 MB delivered); offload 55.6% is 85.5% of it');

    // A viewer that does not upload adds nothing to the capacity, whatever its link.
    const oneSilent = summarizeRun({ ...unshaped, viewers: unshaped.viewers.map((viewer, index) => ({ ...viewer, uplinkBitsPerS: 400_000, nonUploading: index === 2 })) });
    expect(oneSilent.uplinkCapacityBytes).toBe(50_000 * (40 + 39));

    // Nobody shares in the HTTP-only run: no offload was possible.
    expect(baseline).toMatchObject({ capacityBound: 0, uplinkBound: 0, shareOfBound: null });
  });

  it('flags counters that disagree with the origin by more than 2%', () => {
    const off = summarizeRun(record('http', 9_300_000, [{ httpBytes: 9_000_000, deliveredBytes: 9_000_000, playedBytes: 8_000_000 }]));
    expect(off.countersAgree).toBe(false);
    expect(off.notes.join(' ')).toMatch(/disagree .* by 3\.2%/);
  });
});
