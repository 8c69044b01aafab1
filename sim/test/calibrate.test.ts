import { describe, expect, it } from 'vitest';
import { browserRow, calibrationTable, parseCalibrateArgs, simRow, type CalibrationRow } from '../src/calibrate.js';

const row = (offload: number, payload: number): CalibrationRow => ({
  offload,
  stalls: 0,
  httpStalls: 0,
  originFetchesPerSegment: 5,
  uplinkKbitPerS: { payload, control: 2, overhead: 60, originTcp: 27 },
});

describe('npm run calibrate', () => {
  it('reads a browser report\'s Shoal run: offload, stalls against HTTP alone, and each class of the viewers\' uplinks', () => {
    const viewer = (payload: number) => ({ run: { kbitPerS: { payload, control: 2, overhead: 50, origin: 30 } } });
    const parsed = browserRow({
      runs: [
        { engine: 'http', offload: 0, stalls: { count: 1 }, originFetchesPerSegment: 7.5 },
        { engine: 'shoal', offload: 0.1, stalls: { count: 2 }, originFetchesPerSegment: 6, uplinkClasses: { viewers: [viewer(80), viewer(120)] } },
      ],
    });
    expect(parsed).toEqual({ offload: 0.1, stalls: 2, httpStalls: 1, originFetchesPerSegment: 6, uplinkKbitPerS: { payload: 100, control: 2, overhead: 50, originTcp: 30 } });
  });

  it('says where the simulator is off: offload beyond 5 points, a class beyond 15%, more stalls than HTTP alone', () => {
    const table = calibrationTable('realistic', [row(0.1, 100), row(0.12, 100)], [row(0.2, 110), { ...row(0.19, 140), stalls: 1 }]);
    expect(table).toMatch(/offload +11\.0% \(10\.0%, 12\.0%\) +19\.5% \(20\.0%, 19\.0%\) +8\.5 points OFF/);
    expect(table).toMatch(/uplink payload, kbit\/s +100\.0 .* 25% OFF/);
    expect(table).toMatch(/uplink overhead, kbit\/s +60\.0 .* 0% ok/);
    expect(table).toContain('browsers yes, simulator NO');
    expect(calibrationTable('critical', [row(0.35, 300)], [row(0.38, 320)])).toMatch(/3\.0 points ok/);
  });

  it('runs the simulator as the browser swarm runs: a join a second, the uplink by class, HTTP alone beside it', async () => {
    const sim = await simRow('critical', 'live-normal', 4, 40, 1);
    expect(sim.httpStalls).not.toBeNull();
    expect(sim.offload).toBeGreaterThan(0);
    const uplink = sim.uplinkKbitPerS!;
    expect(uplink.payload).toBeGreaterThan(0);
    expect(uplink.overhead).toBeGreaterThan(0);
    // TCP acknowledgements of the viewers' HTTP downloads: 4.5% of what they brought.
    expect(uplink.originTcp).toBeGreaterThan(5);
    expect(uplink.originTcp).toBeLessThan(40);
  });

  it('refuses an unknown profile and a report that is not there, naming them', () => {
    expect(() => parseCalibrateArgs(['--network', 'dialup'])).toThrow(/unknown network "dialup"/);
    expect(() => parseCalibrateArgs(['--browser-reports', '/nonexistent/report.json'])).toThrow(/\/nonexistent\/report.json does not exist/);
    expect(parseCalibrateArgs([])).toMatchObject({ networks: ['realistic', 'critical'], peers: 8, durationS: 90, seeds: [1, 2, 3], browserRuns: 1 });
  });
});
