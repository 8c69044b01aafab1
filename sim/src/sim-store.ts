// The simulator's SegmentStore: core's MemorySegmentStore (the same contract, limit and eviction
// order), keeping only each segment's size and handing out views of the origin's one shared copy
// of the segment. A thousand peers holding copies would need tens of gigabytes; the bytes
// themselves do not change any decision the engine makes.
import { MemorySegmentStore } from '@shoal/core';

export class SimSegmentStore extends MemorySegmentStore {
  constructor(
    bytesLimit: number,
    private readonly contentOf: (streamKey: string, sequence: number) => Uint8Array,
  ) {
    super(bytesLimit);
  }

  protected override keep(): undefined {
    return undefined;
  }

  protected override copy(streamKey: string, sequence: number, _kept: undefined, start: number, end: number): Uint8Array {
    return this.contentOf(streamKey, sequence).subarray(start, end);
  }
}
