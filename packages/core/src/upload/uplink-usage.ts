// Where this viewer's uplink time went, as the upload governor saw it: for each reason the
// uploads were not using the whole link, how long it held and what was sent meanwhile. Reports
// compare it with the link's capacity (the simulator knows it) to say where the unused uplink
// went. Stats only: one addition per change of state, nothing per chunk.

/**
 * `idle`: nobody asked (no upload queued); `yielding`: the viewer's own playback needs the uplink
 * (buffer low, or its own origin downloads take the whole pace); `relay`: uploads wait for relayed
 * bytes still arriving; `paced`: uploads wait for the pace (the governor holds them back); `full`:
 * the channels hold all they may (the link, or SCTP, is the limit).
 */
export type UplinkState = 'idle' | 'yielding' | 'relay' | 'paced' | 'full';

export interface UplinkUsage {
  /** Time in each state, ms. */
  ms: Record<UplinkState, number>;
  /** Payload bytes sent, by the state the governor was in after sending them. */
  bytes: Record<UplinkState, number>;
  /** Uploads the requesters cancelled after some of their bytes went out, and those bytes. */
  cancelledUploads: number;
  cancelledBytes: number;
}

const zero = (): Record<UplinkState, number> => ({ idle: 0, yielding: 0, relay: 0, paced: 0, full: 0 });

export class UplinkUsageMeter {
  private state: UplinkState = 'idle';
  private sinceMs: number;
  private readonly ms = zero();
  private readonly bytes = zero();
  private cancelledUploads = 0;
  private cancelledBytes = 0;

  constructor(nowMs: number) {
    this.sinceMs = nowMs;
  }

  /** The governor is in `state` from now on, after sending `sentBytes` since it last said. */
  enter(state: UplinkState, nowMs: number, sentBytes = 0): void {
    this.ms[this.state] += nowMs - this.sinceMs;
    this.sinceMs = nowMs;
    this.state = state;
    this.bytes[state] += sentBytes;
  }

  /** A requester cancelled an upload after `sentBytes` of it went out. */
  cancelled(sentBytes: number): void {
    this.cancelledUploads++;
    this.cancelledBytes += sentBytes;
  }

  snapshot(nowMs: number): UplinkUsage {
    const ms = { ...this.ms };
    ms[this.state] += nowMs - this.sinceMs;
    return { ms, bytes: { ...this.bytes }, cancelledUploads: this.cancelledUploads, cancelledBytes: this.cancelledBytes };
  }
}
