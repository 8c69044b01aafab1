// QA gates: `--assert offload>=0.6 --assert stalls<=baseline --assert shoal:fetches<=1.5`.
// Each threshold is checked against every engine run of the comparison except the HTTP-only
// baseline (or only the named engine's), and the CLI exits with its own code when one fails.
import type { RunReport, ThresholdResult } from './report-schema.js';
import { engineNames, type EngineName } from './viewer-snapshot.js';

/** The figures a threshold can name, each read from one engine run's report. */
export const thresholdMetrics: Record<string, { describe: string; read: (run: RunReport) => number | null }> = {
  offload: { describe: '1 - origin bytes / bytes delivered (0..1)', read: (run) => run.offload },
  efficiency: { describe: 'offload / ideal (0..1)', read: (run) => run.efficiency },
  saving: { describe: 'origin saving against the HTTP-only baseline (0..1)', read: (run) => run.originSaving },
  fetches: { describe: 'origin fetches per segment played (ideal 1)', read: (run) => run.originFetchesPerSegment },
  stalls: { describe: 'stall count, all viewers', read: (run) => run.stalls.count },
  'stall-seconds': { describe: 'stalled seconds, all viewers', read: (run) => run.stalls.seconds },
  'not-started': { describe: 'viewers that never played', read: (run) => run.startupMs.notStarted },
  startup: { describe: 'median start-up, ms', read: (run) => run.startupMs.p50 },
  latency: { describe: 'median live latency, s', read: (run) => run.latencyS.p50 },
};

type Operator = '>=' | '<=' | '>' | '<';

export interface Threshold {
  /** As written on the command line. */
  text: string;
  /** Only this engine's run; null: every run but the baseline. */
  engine: EngineName | null;
  metric: string;
  operator: Operator;
  /** A number, or the same figure of the HTTP-only baseline run. */
  bound: number | 'baseline';
}

export function parseThreshold(text: string): Threshold {
  const match = /^\s*(?:([a-z0-9-]+):)?([a-z-]+)\s*(>=|<=|>|<)\s*(baseline|[-+]?(?:\d+\.?\d*|\.\d+))\s*$/.exec(text);
  const hint = `e.g. offload>=0.6, stalls<=baseline, shoal:fetches<=1.5; figures: ${Object.keys(thresholdMetrics).join(', ')}`;
  if (!match) throw new Error(`--assert "${text}" is not FIGURE OP VALUE (${hint})`);
  const [, engine, metric, operator, bound] = match;
  if (!thresholdMetrics[metric!]) throw new Error(`--assert "${text}": unknown figure "${metric}" (${hint})`);
  if (engine !== undefined && !(engineNames as readonly string[]).includes(engine)) {
    throw new Error(`--assert "${text}": unknown engine "${engine}"; one of: ${engineNames.join(', ')}`);
  }
  return { text: text.trim(), engine: (engine as EngineName | undefined) ?? null, metric: metric!, operator: operator as Operator, bound: bound === 'baseline' ? 'baseline' : Number(bound) };
}

const compare = (actual: number, operator: Operator, bound: number) =>
  operator === '>=' ? actual >= bound : operator === '<=' ? actual <= bound : operator === '>' ? actual > bound : actual < bound;

export function checkThresholds(thresholds: Threshold[], runs: RunReport[]): ThresholdResult[] {
  const baseline = runs.find((run) => run.engine === 'http') ?? null;
  const results: ThresholdResult[] = [];
  for (const threshold of thresholds) {
    const read = thresholdMetrics[threshold.metric]!.read;
    const targets = runs.filter((run) => (threshold.engine ? run.engine === threshold.engine : run !== baseline));
    if (targets.length === 0) {
      results.push({ threshold: threshold.text, engine: threshold.engine ?? 'http', actual: null, bound: null, pass: false, reason: 'no such run in this comparison' });
    }
    for (const run of targets) {
      const actual = read(run);
      const bound = threshold.bound === 'baseline' ? (baseline ? read(baseline) : null) : threshold.bound;
      const reason = actual === null ? 'the figure is unavailable' : bound === null ? 'no HTTP-only baseline (or it lacks the figure)' : undefined;
      const pass = actual !== null && bound !== null && compare(actual, threshold.operator, bound);
      results.push({ threshold: threshold.text, engine: run.engine, actual, bound, pass, ...(reason ? { reason } : {}) });
    }
  }
  return results;
}

export function renderThresholdLines(results: ThresholdResult[]): string[] {
  return results.map(
    (result) =>
      `${result.pass ? 'PASS' : 'FAIL'}  ${result.engine}: ${result.threshold} (actual ${result.actual ?? '–'}${result.bound !== null ? `, bound ${result.bound}` : ''})${result.reason ? `: ${result.reason}` : ''}`,
  );
}
