// Whether P2P runs, and if not, why: what getStats() and the `p2p` event tell the integrator.
// P2P is an addition, never a condition: whatever this says, segments load over HTTP.
import type { EngineEmit, P2pState } from './engine-events.js';
import type { EngineOptions } from './options.js';
import type { SegmentVerifier, Verification } from './store/integrity.js';
import type { Clock, TimerId } from './types.js';

export interface P2pStatus {
  state: P2pState;
  /** Why P2P is off or unavailable, in words; empty when it is on. */
  reason: string;
  /** What checks bytes from peers; `none`: they reach the player unverified. */
  verification: Verification;
}

const UNVERIFIABLE = 'requireVerifiedP2P: nothing verifies peers';

/** The status an engine starts with, from its options and what its integration could set up. */
export function startingP2pStatus(options: EngineOptions, hasSignaling: boolean, unavailable: string | undefined): Omit<P2pStatus, 'verification'> {
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
    private readonly starting: Omit<P2pStatus, 'verification'>,
    private readonly clock: Clock,
    private readonly emit: EngineEmit,
    private readonly verifier: Pick<SegmentVerifier, 'method' | 'refusesP2P'>,
  ) {
    // Told once after start when P2P is not on, so that listeners added right after construction hear why.
    if (this.status.state !== 'on') this.firstReport = clock.setTimeout(() => emit('p2p', this.status), 0);
  }

  get status(): P2pStatus {
    const verification = this.verifier.method;
    const reason = this.starting.state === 'on' ? (this.problem ?? (this.verifier.refusesP2P ? UNVERIFIABLE : undefined)) : undefined;
    return reason === undefined ? { ...this.starting, verification } : { state: 'unavailable', reason, verification };
  }

  /** Signaling's problem (trackers unreachable, RTCPeerConnection failing), or undefined once it works. */
  setProblem(problem: string | undefined): void {
    if (problem === this.problem) return;
    this.problem = problem;
    this.changed();
  }

  /** Something the status reads changed (the origin turned out to send digests): tell the integrator. */
  changed(): void {
    if (this.starting.state === 'on') this.emit('p2p', this.status);
  }

  destroy(): void {
    this.clock.clearTimeout(this.firstReport);
  }
}
