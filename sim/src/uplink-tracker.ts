// What a simulation records for the report's account of the viewers' uplinks after the joins:
// each viewer's engine stats when the joins end (the report counts from there), and the hop depth
// of every P2P copy (how many peer hops from the origin its bytes came), read off the `done`
// messages the channels carry: a copy completed by peer B is one hop deeper than B's own copy,
// and a copy B got from no peer came from the origin (depth 0).
import type { EngineStats } from '@shoal/core';
import type { SimHost, VirtualClock } from './kit.js';

export interface UplinkRecord {
  /** When the joins ended: the account starts here, ms. */
  fromMs: number;
  /** P2P copies completed after fromMs, by hop depth (index 1: straight from an origin copy). */
  hopCounts: number[];
  /** Each viewer's engine stats at fromMs (undefined: it joined later, or had left). */
  baseline: (EngineStats | undefined)[];
}

export class UplinkTracker {
  readonly hopCounts: number[] = [];
  readonly baseline: (EngineStats | undefined)[] = [];
  /** Per segment, each viewer's copy depth (0: none from a peer), by viewer index. */
  private readonly depths = new Map<number, Uint8Array>();

  constructor(
    private readonly clock: VirtualClock,
    private readonly indexOf: (host: SimHost) => number | undefined,
    readonly fromMs: number,
  ) {}

  /** `from` sent `to` the last bytes of its copy of `sequence`. */
  done(from: SimHost, to: SimHost, sequence: number): void {
    const sender = this.indexOf(from);
    const receiver = this.indexOf(to);
    if (sender === undefined || receiver === undefined) return;
    let row = this.depths.get(sequence);
    const size = Math.max(sender, receiver) + 1;
    if (!row || row.length < size) {
      const grown = new Uint8Array(Math.max(size, (row?.length ?? 0) * 2, 64));
      if (row) grown.set(row);
      this.depths.set(sequence, (row = grown));
    }
    const depth = Math.min(255, row[sender]! + 1);
    row[receiver] = depth;
    if (this.clock.now() >= this.fromMs) this.hopCounts[depth] = (this.hopCounts[depth] ?? 0) + 1;
  }

  record(): UplinkRecord {
    return { fromMs: this.fromMs, hopCounts: Array.from(this.hopCounts, (count) => count ?? 0), baseline: this.baseline };
  }
}
