// Where a long simulation is: simulated time, events per second and an estimate of the wall time
// left, as one line at most every few seconds (the CLI writes it to stderr; --quiet turns it off).

export interface SimProgress {
  /** Virtual time reached, s. */
  simulatedS: number;
  /** The run's length, s. */
  durationS: number;
  /** Wall time since the run started, ms. */
  wallMs: number;
  /** Events run so far. */
  events: number;
}

export interface ProgressMeterOptions {
  /** The least wall time between two lines, ms. */
  everyMs: number;
  /** Wall clock, ms (tests inject one). */
  now: () => number;
}

export class ProgressMeter {
  private readonly options: ProgressMeterOptions;
  private lastPrintMs: number;
  private last: SimProgress = { simulatedS: 0, durationS: 0, wallMs: 0, events: 0 };

  constructor(
    /** What the run is called in the line (e.g. `shoal`, `http baseline`). */
    private readonly label: string,
    private readonly write: (line: string) => void,
    options: Partial<ProgressMeterOptions> = {},
  ) {
    this.options = { everyMs: 5000, now: () => performance.now(), ...options };
    this.lastPrintMs = this.options.now();
  }

  /** Prints a line if the last one is old enough. */
  update(progress: SimProgress): void {
    const now = this.options.now();
    if (now - this.lastPrintMs < this.options.everyMs) return;
    this.write(this.line(progress));
    this.lastPrintMs = now;
    this.last = progress;
  }

  /**
   * The estimate is the time left at the pace since the last line: the joins make the first
   * simulated seconds cheaper than the rest, so the average over the whole run would promise too
   * little.
   */
  line(progress: SimProgress): string {
    const { simulatedS, durationS, wallMs, events } = progress;
    const stepWallMs = wallMs - this.last.wallMs;
    const stepSimS = simulatedS - this.last.simulatedS;
    const eventsPerS = stepWallMs > 0 ? ((events - this.last.events) * 1000) / stepWallMs : 0;
    const leftMs = stepSimS > 0 ? ((durationS - simulatedS) * stepWallMs) / stepSimS : undefined;
    const percent = durationS > 0 ? Math.floor((100 * simulatedS) / durationS) : 100;
    return (
      `${this.label}: ${Math.round(simulatedS)}/${Math.round(durationS)} s simulated (${percent}%) in ${formatDuration(wallMs)}, ` +
      `${Math.round(eventsPerS).toLocaleString('en')} events/s, ${leftMs === undefined ? 'time left unknown' : `about ${formatDuration(leftMs)} left`}`
    );
  }
}

/** 75_000 -> "1m15s", 4_000 -> "4s", 7_500_000 -> "2h05m". */
export function formatDuration(ms: number): string {
  const totalS = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(totalS / 3600);
  const m = Math.floor((totalS % 3600) / 60);
  const s = totalS % 60;
  if (h > 0) return `${h}h${String(m).padStart(2, '0')}m`;
  if (m > 0) return `${m}m${String(s).padStart(2, '0')}s`;
  return `${s}s`;
}
