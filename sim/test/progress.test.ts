import { describe, expect, it } from 'vitest';
import { parseSimArgs, runSimCli, type SimCliOptions } from '../src/cli.js';
import { ProgressMeter, formatDuration } from '../src/progress.js';

describe('progress of a long run', () => {
  it('prints at most one line per interval, with simulated time, events per second and the wall time left at the recent pace', () => {
    let wallMs = 0;
    const lines: string[] = [];
    const meter = new ProgressMeter('Shoal', (line) => lines.push(line), { everyMs: 5000, now: () => wallMs });
    wallMs = 4000;
    meter.update({ simulatedS: 40, durationS: 600, wallMs: 4000, events: 100_000 });
    expect(lines).toEqual([]); // too soon
    wallMs = 5000;
    meter.update({ simulatedS: 50, durationS: 600, wallMs: 5000, events: 150_000 });
    // 10 simulated s per wall s so far: 550 s left take 55 s.
    expect(lines).toEqual(['Shoal: 50/600 s simulated (8%) in 5s, 30,000 events/s, about 55s left']);
    wallMs = 15_000;
    meter.update({ simulatedS: 60, durationS: 600, wallMs: 15_000, events: 250_000 });
    // The pace since the last line (1 simulated s per wall s), not the average since the start.
    expect(lines[1]).toBe('Shoal: 60/600 s simulated (10%) in 15s, 10,000 events/s, about 9m00s left');
  });

  it('formats durations for a terminal', () => {
    expect(formatDuration(4_000)).toBe('4s');
    expect(formatDuration(75_000)).toBe('1m15s');
    expect(formatDuration(7_500_000)).toBe('2h05m');
  });

  it('writes progress lines through the progress writer, and none with --quiet', async () => {
    const run = async (argv: string[]) => {
      const progress: string[] = [];
      const options = { ...(parseSimArgs(['--peers', '2', '--minutes', '0.1', '--no-baseline', ...argv]) as SimCliOptions) };
      // Every update is due: a line per simulated second.
      await runSimCli(options, 'test', () => {}, (line) => progress.push(line), { everyMs: 0 });
      return progress;
    };
    const lines = await run([]);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines[0]).toMatch(/^Shoal: 0\/6 s simulated \(4%\) in \d+s, [\d,]+ events\/s, about \d+s left$/);
    expect(await run(['--quiet'])).toEqual([]);
  });
});
