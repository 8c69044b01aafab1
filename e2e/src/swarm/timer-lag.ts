// How late the pages' timers fired (e2e/pages/timer-lag.js), over a run or a span of it: the
// difference of two of a page's cumulative histograms, and its percentiles. A leaf module.

/** What a page reports: fires so far, the largest lateness, fires by whole milliseconds late. */
export interface TimerLagSnapshot {
  intervalMs: number;
  fires: number;
  maxMs: number;
  histogram: Record<string, number>;
}

export interface TimerLagSummary {
  fires: number;
  /** Whole milliseconds late (a fire 3.7 ms late counts as 3); null without fires. */
  p50Ms: number | null;
  p95Ms: number | null;
  maxMs: number | null;
}

/** Fires by whole milliseconds late between two snapshots of one page (from undefined: since it loaded). */
export function lagHistogramBetween(from: TimerLagSnapshot | undefined, to: TimerLagSnapshot): Map<number, number> {
  const counts = new Map<number, number>();
  for (const [bucket, count] of Object.entries(to.histogram)) {
    const fires = count - (from?.histogram[bucket] ?? 0);
    if (fires > 0) counts.set(Number(bucket), fires);
  }
  return counts;
}

/** Several histograms as one (every viewer's fires pooled). */
export function poolHistograms(histograms: Iterable<Map<number, number>>): Map<number, number> {
  const pooled = new Map<number, number>();
  for (const histogram of histograms) for (const [bucket, count] of histogram) pooled.set(bucket, (pooled.get(bucket) ?? 0) + count);
  return pooled;
}

/** p50, p95 and the largest of a histogram's fires; `exactMaxMs` replaces the largest bucket where known. */
export function summarizeLag(histogram: Map<number, number>, exactMaxMs?: number): TimerLagSummary {
  const buckets = [...histogram].sort((a, b) => a[0] - b[0]);
  const fires = buckets.reduce((sum, [, count]) => sum + count, 0);
  const quantile = (share: number): number | null => {
    let seen = 0;
    for (const [bucket, count] of buckets) {
      seen += count;
      if (seen >= share * fires) return bucket;
    }
    return null;
  };
  return { fires, p50Ms: quantile(0.5), p95Ms: quantile(0.95), maxMs: fires === 0 ? null : (exactMaxMs ?? buckets.at(-1)![0]) };
}
