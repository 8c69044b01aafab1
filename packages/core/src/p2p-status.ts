// Whether P2P runs, and if not, why: what getStats() and the `p2p` event tell the integrator.
// P2P is an addition, never a condition: whatever this says, segments load over HTTP.
import type { EngineEmit, P2pState } from './engine-events.js';
import type { EngineOptions } from './options.js';
import type { Clock, TimerId } from './types.js';


export interface P2pStatus {
  state: P2pState;
  /** Why P2P is off or unavailable, in words; empty when it is on. */
  reason: string;
}

/** The status an engine starts with, from its options and what its integration could set up. */
export function startingP2pStatus(options: EngineOptions, hasSignaling: boolean, unavailable: string | undefined): P2pStatus {
  if (unavailable !== undefined) return { state: 'unavailable', reason: unavailable };
  if (!hasSignaling) return { state: 'off', reason: 'no tracker configured' };
  if (options.maxPeers === 0) return { state: 'off', reason: 'maxPeers is 0' };
  if (!options.p2pDownload && !options.upload) return { state: 'off', reason: 'p2pDownload and upload are both false' };
  return { state: 'on', reason: '' };
}

export class P2pStatusReporter {
  private problem: string | undefined;
  private firstReport: TimerId | undefined;

  constructor(
    private readonly starting: P2pStatus,
    private readonly clock: Clock,
    private readonly emit: EngineEmit,
  ) {
    // Told once after start when P2P is not on, so that listeners added right after construction hear why.
    if (starting.state !== 'on') this.firstReport = clock.setTimeout(() => emit('p2p', this.status), 0);
  }

  get status(): P2pStatus {
    if (this.starting.state !== 'on' || this.problem === undefined) return { ...this.starting };
    return { state: 'unavailable', reason: this.problem };
  }

  /** Signaling's problem (trackers unreachable, RTCPeerConnection failing), or undefined once it works. */
  setProblem(problem: string | undefined): void {
    if (problem === this.problem) return;
    this.problem = problem;
    if (this.starting.state === 'on') this.emit('p2p', this.status);
  }

  destroy(): void {
    this.clock.clearTimeout(this.firstReport);
  }
}
