import { describe, expect, it } from 'vitest';
import { parseSimArgs, runSimCli, usage, type SimCliOptions } from '../src/cli.js';

const parse = (argv: string[]) => parseSimArgs(argv) as SimCliOptions;

describe('simulator CLI', () => {
  it('runs the HTTP-only baseline and Shoal by default, Shoal alone with --no-baseline, the baseline alone with --baseline-only', () => {
    expect(parse([])).toMatchObject({ runs: ['http', 'shoal'] });
    expect(parse(['--no-baseline'])).toMatchObject({ runs: ['shoal'] });
    expect(parse(['--baseline-only'])).toMatchObject({ runs: ['http'] });
    expect(() => parse(['--baseline-only', '--no-baseline'])).toThrow('give either --baseline-only (HTTP alone) or --no-baseline (Shoal alone), not both');
  });

  it('refuses --engine, in every spelling, and names its replacement', () => {
    const message = '--engine was removed: the simulator always runs Shoal; use --baseline-only for HTTP alone';
    for (const argv of [['--engine', 'http'], ['--engine', 'shoal'], ['--engine=http'], ['--peers', '8', '--engine']]) {
      expect(() => parse(argv), argv.join(' ')).toThrow(message);
    }
  });

  it('keeps --engine-options, the options of every P2P viewer\'s engine', () => {
    expect(parse(['--engine-options', '{"maxPeers":3}']).config.engineOptions).toEqual({ maxPeers: 3 });
  });

  it('has a help text that names --baseline-only and --no-baseline and no longer offers --engine', () => {
    expect(usage).toContain('--baseline-only');
    expect(usage).toContain('--no-baseline');
    expect(usage).not.toMatch(/--engine\s/);
  });

  it('reports the runs the flags asked for', async () => {
    const runsOf = async (argv: string[]) => {
      const report = await runSimCli(parse(['--peers', '2', '--minutes', '0.25', ...argv]), 'test', () => undefined);
      return report.runs.map((run) => run.engine);
    };
    expect(await runsOf([])).toEqual(['http', 'shoal']);
    expect(await runsOf(['--no-baseline'])).toEqual(['shoal']);
    expect(await runsOf(['--baseline-only'])).toEqual(['http']);
  });
});
