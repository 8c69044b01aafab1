// A media playlist as hls.js parsed it, turned into the engine's segment references.
import type { SegmentRef } from '@shoal/core';

/** The parts of an hls.js Fragment the engine needs. */
export interface FragmentLike {
  sn: number | 'initSegment';
  url: string;
  start: number;
  duration: number;
  byteRangeStartOffset?: number | undefined;
  byteRangeEndOffset?: number | undefined;
}

export function segmentRef(streamKey: string, fragment: FragmentLike, url = fragment.url): SegmentRef | undefined {
  if (typeof fragment.sn !== 'number') return undefined;
  const ref: SegmentRef = { streamKey, sequence: fragment.sn, url, startS: fragment.start, durationS: fragment.duration };
  const { byteRangeStartOffset: start, byteRangeEndOffset: end } = fragment;
  // hls.js's end offset is exclusive, like the engine's.
  if (start !== undefined && end !== undefined && end > start) ref.byteRange = { start, end };
  return ref;
}

export function segmentRefs(streamKey: string, fragments: readonly FragmentLike[]): SegmentRef[] {
  const refs: SegmentRef[] = [];
  for (const fragment of fragments) {
    const ref = segmentRef(streamKey, fragment);
    if (ref) refs.push(ref);
  }
  return refs;
}
