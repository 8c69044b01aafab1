// The viewers' memory over a run (the soak's question: does an engine that plays for an hour keep
// its heap and segment store flat?): each viewer's JS heap and store size at every sample, and the
// growth per hour after warm-up from a least-squares line through them.

export interface MemoryPoint {
  /** Seconds since the run started. */
  tS: number;
  id: string;
  /** Chromium's performance.memory.usedJSHeapSize (coarse); null where unavailable. */
  heapBytes: number | null;
  /** Shoal's segment store; null for other engines. */
  storeBytes: number | null;
}

export interface ViewerMemory {
  id: string;
  fromS: number;
  toS: number;
  heapFirstBytes: number | null;
  heapLastBytes: number | null;
  heapMaxBytes: number | null;
  /** Slope of the heap after warm-up, bytes per hour; null with under 2 minutes of samples after it. */
  heapGrowthBytesPerHour: number | null;
  /** Where the fit starts: warm-up over, and (Shoal) the store filled to 95% of its largest size. */
  settledFromS: number;
  storeMaxBytes: number | null;
  storeGrowthBytesPerHour: number | null;
}

export interface MemoryReport {
  warmupS: number;
  viewers: ViewerMemory[];
  /** Every sample (for the chart), thinned to at most ~200 per viewer. */
  series: MemoryPoint[];
}

/**
 * Warm-up: the first two minutes of each viewer's life (player buffer), and for Shoal until its
 * segment store filled to 95% of its largest size (it keeps past segments up to its limit, 64 MiB
 * by default: about 12 minutes of a 750 kbit/s stream), so the fit measures a steady state.
 */
export const MEMORY_WARMUP_S = 120;
const STORE_FULL_SHARE = 0.95;
const MIN_FIT_SPAN_S = 120;

/** Least-squares slope of y over t (per second); null with fewer than 3 points. */
export function slopePerSecond(points: ReadonlyArray<{ t: number; y: number }>): number | null {
  if (points.length < 3) return null;
  const n = points.length;
  const meanT = points.reduce((sum, point) => sum + point.t, 0) / n;
  const meanY = points.reduce((sum, point) => sum + point.y, 0) / n;
  let covariance = 0;
  let variance = 0;
  for (const point of points) {
    covariance += (point.t - meanT) * (point.y - meanY);
    variance += (point.t - meanT) ** 2;
  }
  return variance > 0 ? covariance / variance : null;
}

export function summarizeMemory(points: readonly MemoryPoint[]): MemoryReport | null {
  if (points.length === 0) return null;
  const byViewer = new Map<string, MemoryPoint[]>();
  for (const point of points) byViewer.set(point.id, [...(byViewer.get(point.id) ?? []), point]);
  const viewers: ViewerMemory[] = [];
  const series: MemoryPoint[] = [];
  for (const [id, own] of byViewer) {
    const fromS = own[0]!.tS;
    const toS = own.at(-1)!.tS;
    const storeMax = Math.max(0, ...own.map((point) => point.storeBytes ?? 0));
    const storeFullS = storeMax > 0 ? own.find((point) => (point.storeBytes ?? 0) >= STORE_FULL_SHARE * storeMax)!.tS : fromS;
    const settledFromS = Math.max(fromS + MEMORY_WARMUP_S, storeFullS);
    const settled = own.filter((point) => point.tS >= settledFromS);
    const growth = (pick: (point: MemoryPoint) => number | null) => {
      const fit = settled.filter((point) => pick(point) !== null).map((point) => ({ t: point.tS, y: pick(point)! }));
      if (fit.length < 3 || fit.at(-1)!.t - fit[0]!.t < MIN_FIT_SPAN_S) return null;
      const slope = slopePerSecond(fit);
      return slope === null ? null : Math.round(slope * 3600);
    };
    const heaps = own.map((point) => point.heapBytes).filter((value): value is number => value !== null);
    const stores = own.map((point) => point.storeBytes).filter((value): value is number => value !== null);
    viewers.push({
      id,
      fromS,
      toS,
      heapFirstBytes: heaps[0] ?? null,
      heapLastBytes: heaps.at(-1) ?? null,
      heapMaxBytes: heaps.length ? Math.max(...heaps) : null,
      heapGrowthBytesPerHour: growth((point) => point.heapBytes),
      settledFromS,
      storeMaxBytes: stores.length ? Math.max(...stores) : null,
      storeGrowthBytesPerHour: growth((point) => point.storeBytes),
    });
    const step = Math.max(1, Math.ceil(own.length / 200));
    own.forEach((point, index) => index % step === 0 && series.push(point));
  }
  return { warmupS: MEMORY_WARMUP_S, viewers, series };
}
