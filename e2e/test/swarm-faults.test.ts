import { describe, expect, it } from 'vitest';
import { slopePerSecond, summarizeMemory, type MemoryPoint } from '../src/swarm/memory-report.js';
import { summarizeFaults } from '../src/swarm/report-faults.js';
import { scenarios } from '../src/swarm/scenarios.js';
import { faultsDurationS, type FaultRecord } from '../src/swarm/faults.js';
import type { ViewerSnapshot } from '../src/swarm/viewer-snapshot.js';

describe('swarm faults report', () => {
  it('gives each hostile peer who banned it and how fast, and the honest upload it drew', () => {
    const record: FaultRecord = {
      faults: ['hostile-peers'],
      events: [],
      trackerOutage: null,
      crashes: [{ id: 'v1', atS: 30, uploadingBytesPerS: 50_000, replacement: 'v5' }],
      originBursts: [],
      originInjectedErrors: null,
      hostile: [
        {
          behaviour: 'wrong-bytes', peerId: 'bad', startedAtMs: 10_000, joinedSwarms: 2, error: null, sentMessages: 9, sentBytes: 900,
          peers: [
            { id: 'a', connectedAtMs: 11_000, closedAtMs: 13_000, closeReason: null, requests: 1, firstRequestAtMs: 12_000, lastRequestAtMs: 12_000, dataBytesReceived: 0, connections: 1 },
            { id: 'b', connectedAtMs: 11_000, closedAtMs: null, closeReason: null, requests: 3, firstRequestAtMs: 12_000, lastRequestAtMs: 20_000, dataBytesReceived: 1_000, connections: 1 },
          ],
          phaseFromS: 0, phaseToS: 40, honestUploadedDuringPhase: 100_000,
        },
      ],
    };
    const viewer = (id: string, bans: ViewerSnapshot['bans'], stallsAtS: number[]) => ({ id, final: { bans } as ViewerSnapshot, stallTimeline: stallsAtS.map((startS) => ({ startS })) });
    const report = summarizeFaults(record, [
      viewer('v0', [{ peerId: 'bad', reason: 'integrity', atMs: 13_000 }], [31]),
      viewer('v1', [], [32]),
      viewer('v2', [{ peerId: 'bad', reason: 'integrity', atMs: 15_000 }, { peerId: 'other', reason: 'x', atMs: 1 }], [50]),
    ]);
    expect(report.hostile[0]).toMatchObject({
      honestPeersMet: 2, bannedBy: 2, banAfterS: { median: 3, max: 5 }, closedByHonest: 1, requestsReceived: 4,
      lastRequestAfterS: 10, honestBytesUploadedToIt: 1_000, shareOfHonestUpload: 0.01, banReasons: ['integrity'],
    });
    // The crashed viewer's own stall is not the others'; v2's is outside the window.
    expect(report.crashes[0]!.otherViewersStallsWithin.stalls).toBe(1);
  });

  it('fits the heap growth per hour after warm-up, and gives none for a short life', () => {
    expect(slopePerSecond([{ t: 0, y: 1 }, { t: 1, y: 3 }, { t: 2, y: 5 }])).toBe(2);
    const points: MemoryPoint[] = Array.from({ length: 61 }, (_, k) => ({ tS: k * 10, id: 'v0', heapBytes: 10e6 + (k * 10 >= 120 ? k * 10 * 100 : 5e6), storeBytes: 2e6 }));
    points.push({ tS: 0, id: 'v9', heapBytes: 1, storeBytes: null }, { tS: 5, id: 'v9', heapBytes: 2, storeBytes: null });
    const memory = summarizeMemory(points)!;
    const [long, short] = memory.viewers;
    expect(long!.heapGrowthBytesPerHour).toBe(360_000);
    expect(long!.storeGrowthBytesPerHour).toBe(0);
    expect(short!.heapGrowthBytesPerHour).toBeNull();
    // A store that fills for 10 minutes: the fit starts once it is (nearly) full.
    const filling = Array.from({ length: 121 }, (_, k) => ({ tS: k * 10, id: 'v1', heapBytes: 1e7 + Math.min(k, 60) * 1e6, storeBytes: Math.min(k, 60) * 1e6 }));
    const [settled] = summarizeMemory(filling)!.viewers;
    expect(settled!.settledFromS).toBe(570);
    expect(settled!.storeGrowthBytesPerHour).toBeLessThan(5e6); // filling, it grew 360 MB/h
  });

  it('says how long a run its faults need', () => {
    const options = { peers: 3, durationS: 60, faults: { faults: ['tracker-outage' as const], outageS: 10 } };
    // joins at 0, 1, 2 s; 10 s warm-up; 10 s away + 25 s watch; 5 s after.
    expect(faultsDurationS(scenarios['live-normal']!, options)).toBe(52);
    expect(faultsDurationS(scenarios['live-normal']!, { ...options, faults: undefined })).toBe(0);
  });
});
