// A fixed-bucket histogram in the Prometheus sense: cumulative counts per upper bound, a sum and
// a count. Observing is a short scan over a dozen bounds, cheap enough for every announce.

export interface HistogramSnapshot {
  /** Upper bounds in seconds, ascending; the implicit last bucket is +Inf. */
  boundsSec: number[];
  /** Observations at or below each bound (not cumulative), then the +Inf remainder. */
  counts: number[];
  sumSec: number;
  count: number;
}

/** 50 µs to 250 ms: an announce handled in-process sits in the first few, a stalled loop in the last. */
export const ANNOUNCE_LATENCY_BOUNDS_SEC = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25];

export class LatencyHistogram {
  private readonly counts: number[];
  private sumSec = 0;
  private count = 0;

  constructor(private readonly boundsSec: readonly number[] = ANNOUNCE_LATENCY_BOUNDS_SEC) {
    this.counts = new Array<number>(boundsSec.length + 1).fill(0);
  }

  observe(seconds: number): void {
    const bounds = this.boundsSec;
    let i = 0;
    while (i < bounds.length && seconds > bounds[i]!) i++;
    this.counts[i]!++;
    this.sumSec += seconds;
    this.count++;
  }

  snapshot(): HistogramSnapshot {
    return { boundsSec: [...this.boundsSec], counts: [...this.counts], sumSec: this.sumSec, count: this.count };
  }
}

/** Adds snapshots with the same bounds (e.g. from several worker threads). */
export function mergeHistograms(snapshots: readonly HistogramSnapshot[]): HistogramSnapshot | null {
  const first = snapshots[0];
  if (!first) return null;
  const merged: HistogramSnapshot = { boundsSec: [...first.boundsSec], counts: new Array<number>(first.counts.length).fill(0), sumSec: 0, count: 0 };
  for (const snapshot of snapshots) {
    snapshot.counts.forEach((value, i) => (merged.counts[i]! += value));
    merged.sumSec += snapshot.sumSec;
    merged.count += snapshot.count;
  }
  return merged;
}
