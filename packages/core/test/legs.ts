// Legs for tests of a PeerSession alone: a transfer of its own for one segment, and a sink that
// records what the session hands it (the Transfers room does this in the engine).
import type { PeerSession } from '../src/peers/peer.js';
import { Transfer, type Leg, type LegFailure, type LegSink } from '../src/transfers/transfer.js';
import type { Clock } from '../src/types.js';

export interface LegRecord {
  transfer: Transfer;
  leg: Leg;
  /** Bytes handed over, and how the leg ended. */
  arrived: number;
  finished: boolean;
  failed: LegFailure | undefined;
}

/** Asks `peer` for bytes [start, end) of segment `sequence` (a fresh transfer, or `transfer`'s), needed within `withinMs`. */
export function askFor(
  peer: PeerSession, clock: Clock, sequence: number,
  { start = 0, end = Infinity, withinMs = 60_000, transfer, then }: { start?: number; end?: number; withinMs?: number; transfer?: Transfer; then?: () => void } = {},
): LegRecord {
  const own = transfer ?? new Transfer({ streamKey: 'test', sequence, url: `https://origin.test/${sequence}.ts`, startS: sequence * 2, durationS: 2 }, false);
  const leg = own.addLeg(start, end, { kind: 'peer', peer }, clock.now());
  const record: LegRecord = { transfer: own, leg, arrived: 0, finished: false, failed: undefined };
  const sink: LegSink = {
    sized: (_leg, totalBytes) => own.setSize(totalBytes),
    arrived: (_leg, chunk) => {
      own.write(leg, chunk);
      record.arrived += chunk.length;
    },
    finished: () => {
      record.finished = true;
      then?.();
    },
    failed: (_leg, reason) => {
      record.failed = reason;
    },
  };
  peer.request(leg, withinMs, sink);
  return record;
}

/** Asks `peer` for segment `sequence`, then the next as soon as one arrives, and so on: an uploader never short of work. */
export function askOneAfterAnother(peer: PeerSession, clock: Clock, sequence = 0): void {
  askFor(peer, clock, sequence, { then: () => askOneAfterAnother(peer, clock, sequence + 1) });
}
