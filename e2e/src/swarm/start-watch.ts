// A run in which no viewer starts playing measures nothing: the stream, the pages or the player is
// broken, and every further second (and every further engine) shows the same. The watch looks
// once, NO_START_WINDOW_S after the run's clock started (when the first viewer joins; startup takes
// 1-10 s even on a loaded machine), and then stops the run with what the viewers said.
import type { ViewerSnapshot } from './viewer-snapshot.js';

export const NO_START_WINDOW_S = 15;
/** report.partial.code of a comparison stopped because no viewer started. */
export const NO_VIEWER_PLAYING = 'NO_VIEWER_PLAYING';

interface WatchedViewer {
  id: string;
  last: ViewerSnapshot | null;
  sample(): Promise<unknown>;
}

/** Why no viewer played, from their snapshots: their errors, counted, or that none answered. */
export function noStartReason(viewers: readonly WatchedViewer[], windowS = NO_START_WINDOW_S): string {
  const errors = new Map<string, number>();
  for (const viewer of viewers) {
    const seen = new Set<string>();
    if (viewer.last?.fatalError) seen.add(viewer.last.fatalError);
    for (const error of viewer.last?.errors ?? []) seen.add(error.details);
    for (const error of seen) errors.set(error, (errors.get(error) ?? 0) + 1);
  }
  const listed = [...errors].map(([error, count]) => `${error} (${count} of ${viewers.length})`).join(', ');
  const said = viewers.length === 0 ? 'no viewer page opened' : listed ? `the viewers' player errors: ${listed}` : 'their players reported no error';
  return `no viewer started playing within ${windowS} s of the start (${said}); stopped early instead of running the full duration`;
}

/**
 * Watches one engine run: `check` is cheap until the window has passed, then looks once, and
 * calls `onNoStart` with the reason when no viewer has shown a first frame.
 */
export class StartWatch {
  private settled = false;

  constructor(
    private readonly startedAtMs: number,
    private readonly onNoStart: (reason: string) => void,
    private readonly windowS = NO_START_WINDOW_S,
  ) {}

  /** Returns the reason it stopped the run for, or null (someone plays, or it is too early to tell). */
  async check(viewers: readonly WatchedViewer[], nowMs = Date.now()): Promise<string | null> {
    if (this.settled) return null;
    if (viewers.some((viewer) => viewer.last?.firstFrameMs != null)) {
      this.settled = true;
      return null;
    }
    if (nowMs < this.startedAtMs + this.windowS * 1000) return null;
    this.settled = true;
    await Promise.all(viewers.map((viewer) => viewer.sample()));
    if (viewers.some((viewer) => viewer.last?.firstFrameMs != null)) return null;
    const reason = noStartReason(viewers, this.windowS);
    this.onNoStart(reason);
    return reason;
  }
}
