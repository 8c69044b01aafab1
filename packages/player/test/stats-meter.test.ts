import { describe, expect, it } from 'vitest';
import { formatBytes, formatSpeed } from '../src/format.js';
import { StatsMeter } from '../src/stats-meter.js';

const counters = (downloaded: number, uploaded: number) => ({ httpBytes: downloaded / 2, p2pBytes: downloaded / 2, uploadedBytes: uploaded, peers: 1 });

describe('StatsMeter', () => {
  it('reports zero speed before two samples', () => {
    expect(new StatsMeter().record(0, counters(1000, 0))).toEqual({ downloadBytesPerS: 0, uploadBytesPerS: 0 });
  });
  it('measures download (HTTP + P2P) and upload speed over its window', () => {
    const meter = new StatsMeter(4_000);
    for (let second = 0; second <= 10; second += 1) meter.record(second * 1000, counters(second * 100_000, second * 25_000));
    expect(meter.speeds()).toEqual({ downloadBytesPerS: 100_000, uploadBytesPerS: 25_000 });
  });
  it('forgets a burst once it leaves the window', () => {
    const meter = new StatsMeter(4_000);
    meter.record(0, counters(0, 0));
    meter.record(1000, counters(1_000_000, 0));
    for (let second = 2; second <= 8; second += 1) meter.record(second * 1000, counters(1_000_000, 0));
    expect(meter.speeds().downloadBytesPerS).toBe(0);
  });
});

describe('formatting', () => {
  it('shows bytes and speeds in decimal units', () => {
    expect([formatBytes(999), formatBytes(1_500), formatBytes(2_345_678), formatBytes(123_456_789)]).toEqual(['999 B', '1.5 kB', '2.3 MB', '123 MB']);
    expect([formatSpeed(0), formatSpeed(1_250), formatSpeed(250_000)]).toEqual(['0 bit/s', '10.0 kbit/s', '2.0 Mbit/s']);
  });
});
