// How late this page's timers fire: a timer every TIMER_LAG_INTERVAL_MS, each fire's lateness
// (how long after it was due) counted in a histogram of whole milliseconds, so the runner can
// take percentiles over any span by subtracting two snapshots. Chained setTimeout, not
// setInterval: Chromium keeps a repeating timer on its original beat, so a fire late by more than
// one interval would read as a short lateness; a chained timeout's due time is unambiguous, and
// it is how the engine's own clock schedules its work.
export const TIMER_LAG_INTERVAL_MS = 100;

const histogram = new Map();
let fires = 0;
let maxMs = 0;

function arm() {
  const dueMs = performance.now() + TIMER_LAG_INTERVAL_MS;
  setTimeout(() => {
    const lateMs = Math.max(0, performance.now() - dueMs);
    const bucket = Math.floor(lateMs);
    histogram.set(bucket, (histogram.get(bucket) ?? 0) + 1);
    fires += 1;
    maxMs = Math.max(maxMs, lateMs);
    arm();
  }, TIMER_LAG_INTERVAL_MS);
}
arm();

/** Fires so far, the largest lateness, and the histogram (whole ms late -> fires), for the snapshot. */
export function timerLagSnapshot() {
  return { intervalMs: TIMER_LAG_INTERVAL_MS, fires, maxMs: Math.round(maxMs), histogram: Object.fromEntries(histogram) };
}
