// Turns cumulative byte counters into speeds: the rate over the last few seconds of samples.
import type { P2pCounters } from './types.js';

interface Sample {
  atMs: number;
  downloadedBytes: number;
  uploadedBytes: number;
}

export interface Speeds {
  downloadBytesPerS: number;
  uploadBytesPerS: number;
}

export class StatsMeter {
  private readonly samples: Sample[] = [];

  /** `windowMs`: how far back a speed looks; long enough to smooth over segment bursts. */
  constructor(private readonly windowMs = 4_000) {}

  record(atMs: number, counters: P2pCounters): Speeds {
    this.samples.push({ atMs, downloadedBytes: counters.httpBytes + counters.p2pBytes, uploadedBytes: counters.uploadedBytes });
    // Keep one sample at or before the window's start, so the window is always fully covered.
    while (this.samples.length > 2 && this.samples[1]!.atMs <= atMs - this.windowMs) this.samples.shift();
    return this.speeds();
  }

  speeds(): Speeds {
    const first = this.samples[0];
    const last = this.samples[this.samples.length - 1];
    if (!first || !last || last.atMs <= first.atMs) return { downloadBytesPerS: 0, uploadBytesPerS: 0 };
    const seconds = (last.atMs - first.atMs) / 1000;
    return {
      downloadBytesPerS: Math.max(0, (last.downloadedBytes - first.downloadedBytes) / seconds),
      uploadBytesPerS: Math.max(0, (last.uploadedBytes - first.uploadedBytes) / seconds),
    };
  }
}
