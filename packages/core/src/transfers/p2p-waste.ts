// How often each segment's P2P bytes were thrown away (cancelled, failed, unverifiable): the plan
// asks no peer for a segment past its limit (plan/scheduler.ts, MAX_WASTED_P2P_TRANSFERS).

export class P2PWaste {
  private readonly counts = new Map<number, number>();

  of(sequence: number): number {
    return this.counts.get(sequence) ?? 0;
  }

  /** One more P2P transfer of the segment was thrown away. */
  add(sequence: number): void {
    this.counts.set(sequence, this.of(sequence) + 1);
  }

  /** No peer is to be asked for the segment again. */
  exhaust(sequence: number): void {
    this.counts.set(sequence, Infinity);
  }

  /** The segment is in: its count no longer matters. */
  clear(sequence: number): void {
    this.counts.delete(sequence);
  }

  /** Forgets the segments no longer in the playlist. */
  forget(inPlaylist: (sequence: number) => boolean): void {
    for (const sequence of this.counts.keys()) if (!inPlaylist(sequence)) this.counts.delete(sequence);
  }
}
