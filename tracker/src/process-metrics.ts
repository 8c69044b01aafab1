// What a process exposes about itself beside the tracker's own figures: open file descriptors
// against their limit, event-loop lag, and the build that runs.

import { readdirSync } from 'node:fs';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { readOpenFilesLimit } from './open-files-limit.js';

export interface EventLoopLag {
  /** Over the last complete window (about 10 s), in seconds. */
  p50Sec: number;
  p99Sec: number;
  maxSec: number;
}

export interface ProcessFigures {
  openFds: number | null;
  maxFds: number | null;
  eventLoopLag: EventLoopLag;
}

/** Open descriptors of this process (Linux: entries of /proc/self/fd), or null where unknown. */
export function countOpenFds(): number | null {
  try {
    // The directory handle readdirSync opens is itself listed; do not count it.
    return readdirSync('/proc/self/fd').length - 1;
  } catch {
    return null;
  }
}

export function readMaxFds(): number | null {
  try {
    const { soft } = readOpenFilesLimit();
    return Number.isFinite(soft) ? soft : null;
  } catch {
    return null;
  }
}

const RESOLUTION_MS = 10;
/** The histogram records whole timer intervals; lag is what exceeds the interval asked for. */
const lagSec = (intervalNs: number) => Math.max(0, intervalNs / 1e6 - RESOLUTION_MS) / 1000;

/**
 * Samples the event loop's delay continuously and reports the last finished window, so a
 * scrape shows recent lag rather than an average since start.
 */
export class EventLoopMonitor {
  private readonly histogram: IntervalHistogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  private last: EventLoopLag = { p50Sec: 0, p99Sec: 0, maxSec: 0 };
  private rolled = false;
  private readonly timer: NodeJS.Timeout;

  constructor(windowMs = 10_000) {
    this.histogram.enable();
    this.timer = setInterval(() => this.roll(), windowMs);
    this.timer.unref();
  }

  lag(): EventLoopLag {
    return this.rolled ? this.last : this.current();
  }

  destroy(): void {
    clearInterval(this.timer);
    this.histogram.disable();
  }

  private current(): EventLoopLag {
    const h = this.histogram;
    if (h.count === 0) return { p50Sec: 0, p99Sec: 0, maxSec: 0 };
    return { p50Sec: lagSec(h.percentile(50)), p99Sec: lagSec(h.percentile(99)), maxSec: lagSec(h.max) };
  }

  private roll(): void {
    this.last = this.current();
    this.rolled = true;
    this.histogram.reset();
  }
}
