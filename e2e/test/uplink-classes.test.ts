import { describe, expect, it } from 'vitest';
import { lagHistogramBetween, summarizeLag, type TimerLagSnapshot } from '../src/swarm/timer-lag.js';
import { summarizeUplinkClasses, uplinkSpan, type UplinkPoint } from '../src/swarm/uplink-classes.js';
import { describeUplinkClasses } from '../src/swarm/uplink-classes-view.js';
import { destinationOf, parseChainCounters, type KernelUplink } from '../src/swarm/uplink-counters.js';

const kernel = (origin: number, tracker: number, udp: number, other: number): KernelUplink => ({
  origin: { bytes: origin, packets: Math.ceil(origin / 52) },
  tracker: { bytes: tracker, packets: 1 },
  udp: { bytes: udp, packets: Math.ceil(udp / 1200) },
  other: { bytes: other, packets: other > 0 ? 1 : 0 },
});
const lag = (histogram: Record<string, number>, maxMs: number): TimerLagSnapshot => ({
  intervalMs: 100, fires: Object.values(histogram).reduce((sum, count) => sum + count, 0), maxMs, histogram,
});
const point = (tS: number, k: KernelUplink, uploadBytes: number, controlBytes: number | null, timerLag: TimerLagSnapshot | null = null): UplinkPoint => ({ tS, kernel: k, uploadBytes, controlBytes, timerLag });

describe('uplink classes', () => {
  it('splits the kernel UDP bytes into payload, control and overhead, and the classes sum to the kernel total', () => {
    const span = uplinkSpan(point(10, kernel(1_000, 100, 10_000, 0), 8_000, 500), point(20, kernel(13_500, 600, 310_000, 40), 258_000, 12_500), 0);
    expect(span.bytes).toEqual({ payload: 250_000, control: 12_000, overhead: 38_000, origin: 12_500, tracker: 500, other: 40 });
    expect(span.totalBytes).toBe(300_000 + 12_500 + 500 + 40);
    expect(span.seconds).toBe(10);
    expect(span.kbitPerS.payload).toBe(200);
    expect(span.kbitPerS.total).toBe(250.4);
  });

  it('counts from zero at the join for the run, and puts control inside overhead when the engine does not count it', () => {
    const span = uplinkSpan(null, point(35, kernel(8_000, 0, 30_000, 0), 20_000, null), 5);
    expect(span.seconds).toBe(30);
    expect(span.bytes.control).toBe(0);
    expect(span.bytes.overhead).toBe(10_000);
  });

  it('groups viewers by whether they sent payload after the joins, per viewer, with their pace against what went out', () => {
    const record = {
      fromS: 20,
      viewers: [
        { id: 'v0', atJoins: point(20, kernel(0, 0, 0, 0), 0, 0), last: point(60, kernel(40_000, 400, 2_000_000, 0), 1_800_000, 60_000), paceSamples: [50_000, 60_000], advertisedSamples: [40_000, 44_000] },
        { id: 'v1', atJoins: point(20, kernel(0, 0, 0, 0), 0, 0), last: point(60, kernel(60_000, 400, 200_000, 0), 0, 40_000), paceSamples: [0] },
      ],
    };
    const report = summarizeUplinkClasses(record, new Map([['v0', { joinedS: 0, capBitsPerS: 400_000 }], ['v1', { joinedS: 2, capBitsPerS: 400_000 }]]));
    expect(report.sendingPayload.viewers).toBe(1);
    expect(report.sendingNone.viewers).toBe(1);
    expect(report.sendingNone.afterJoins!.bytes.payload).toBe(0);
    expect(report.sendingNone.afterJoins!.bytes.overhead).toBe(160_000);
    // Both viewers: bytes summed, rates per viewer over 80 viewer-seconds.
    expect(report.all.afterJoins!.seconds).toBe(80);
    expect(report.all.afterJoins!.totalBytes).toBe(2_300_800);
    expect(report.all.afterJoins!.kbitPerS.total).toBe(230.1);
    expect(report.viewers[0]!.rates).toEqual({ paceBytesPerS: 55_000, advertisedBytesPerS: 42_000, payloadBytesPerS: 45_000, udpBytesPerS: 50_000, linkBytesPerS: 51_010 });
    expect(describeUplinkClasses('shoal', report).join('\n')).toContain('pace 55.0, advertised 42.0 kB/s against payload 45.0');
    expect(report.viewers[1]!.run!.seconds).toBe(58);
    expect(report.controlCounted).toBe(true);
  });

  it("takes the pages' timer lag as percentiles of the fires between two readings, pooled over viewers", () => {
    const atJoins = lag({ 0: 90, 1: 5, 400: 5 }, 450);
    const last = lag({ 0: 170, 1: 15, 3: 10, 30: 5, 400: 5 }, 450);
    expect(summarizeLag(lagHistogramBetween(atJoins, last))).toEqual({ fires: 105, p50Ms: 0, p95Ms: 3, maxMs: 30 });
    expect(summarizeLag(lagHistogramBetween(undefined, last), 450)).toMatchObject({ fires: 205, p95Ms: 3, maxMs: 450 });
    const record = { fromS: 10, viewers: ['v0', 'v1'].map((id) => ({ id, atJoins: point(10, kernel(0, 0, 0, 0), 0, 0, atJoins), last: point(50, kernel(0, 0, 0, 0), 0, 0, last), paceSamples: [] })) };
    const report = summarizeUplinkClasses(record, new Map([['v0', { joinedS: 0, capBitsPerS: null }], ['v1', { joinedS: 0, capBitsPerS: null }]]));
    expect(report.timerLag).toEqual({ intervalMs: 100, run: { fires: 410, p50Ms: 0, p95Ms: 3, maxMs: 450 }, afterJoins: { fires: 210, p50Ms: 0, p95Ms: 3, maxMs: 30 } });
  });

  it("reads the chain's counters in rule order, and the servers' ports from their URLs", () => {
    const listing = `Chain SHOAL_UPLINK (1 references)
    pkts      bytes target     prot opt in     out     source               destination
     120     9000 RETURN     6    --  *      *       0.0.0.0/0            198.18.0.1           tcp dpt:41000
       3      400 RETURN     6    --  *      *       0.0.0.0/0            198.18.0.1           tcp dpt:41001
    2000  2400000 RETURN     17   --  *      *       0.0.0.0/0           !224.0.0.0/4
       1       90 RETURN     0    --  *      *       0.0.0.0/0            0.0.0.0/0
`;
    expect(parseChainCounters(listing)).toEqual({
      origin: { packets: 120, bytes: 9000 }, tracker: { packets: 3, bytes: 400 }, udp: { packets: 2000, bytes: 2_400_000 }, other: { packets: 1, bytes: 90 },
    });
    expect(parseChainCounters('iptables: No chain/target/match by that name.')).toBeNull();
    expect(destinationOf('http://198.18.0.1:41000/live/master.m3u8')).toEqual({ address: '198.18.0.1', port: 41000 });
    expect(destinationOf('wss://tracker.example')).toEqual({ address: null, port: 443 });
  });
});
