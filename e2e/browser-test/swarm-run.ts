// The swarm runner as the browser tests run it: the report in the test's own output folder,
// progress lines silent unless SHOAL_SWARM_LOG=1, and the checks without which a run's figures
// mean nothing, on every run of the comparison: each viewer started playing, no player hit a
// fatal error, and (where the run had its own origin to count) the viewers' HTTP counters agree
// with the origin's within 2%.
import { expect, test } from '@playwright/test';
import type { SwarmReport } from '../src/swarm/report-schema.js';
import { runSwarm, type SwarmOptions } from '../src/swarm/run-swarm.js';

export const swarmLog = (line: string): void => {
  if (process.env.SHOAL_SWARM_LOG === '1') console.log(line);
};

/**
 * Why a run on shaped links leaves the counters check out: the viewers are sampled before the
 * origin, and a segment still queued on a viewer's shaped downlink then counts at the origin only.
 * Seen in 1 of 3 runs of shaped-network.spec.ts at a load average of 12.
 */
export const SHAPED_COUNTERS = 'shaped links: a segment queued on a downlink at the last sample counts at the origin only';

export interface TestSwarmOptions extends Omit<SwarmOptions, 'outDir'> {
  /** The report's folder, under the test's output folder. */
  name: string;
  /**
   * Leaves the counters check out, saying why (SHAPED_COUNTERS for a run on shaped links). Not
   * needed for an external stream, which has no origin count.
   */
  countersUnchecked?: string;
}

/** Runs the swarm, checks that its runs are valid, and returns the report for the test's own assertions. */
export async function runTestSwarm({ name, countersUnchecked, log, ...options }: TestSwarmOptions): Promise<SwarmReport> {
  const report = await runSwarm({
    ...options,
    outDir: test.info().outputPath(name),
    log: (line) => {
      log?.(line);
      swarmLog(line);
    },
  });
  for (const run of report.runs) {
    expect(run.startupMs.notStarted, `${run.engine}: viewers that never started playing`).toBe(0);
    expect(run.perPeer.filter((peer) => peer.fatalError).map((peer) => `${peer.id}: ${peer.fatalError}`), `${run.engine}: fatal player errors`).toEqual([]);
    if (run.originCounted && countersUnchecked === undefined) {
      expect(run.countersAgree, `${run.engine}: viewers' HTTP counters against the origin's, off by ${run.countersDifference}`).toBe(true);
    }
  }
  return report;
}
