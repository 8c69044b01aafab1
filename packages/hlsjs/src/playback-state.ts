// What the engine needs to know about playback, read from the media element and hls.js.
import type { PlaybackReport } from '@shoal/core';

export interface TimeRangesLike {
  readonly length: number;
  start(index: number): number;
  end(index: number): number;
}

export interface PlaybackInputs {
  currentTime: number;
  paused: boolean;
  playbackRate: number;
  buffered: TimeRangesLike;
  isLive: boolean;
  /** The live playlist's edge (end of its last segment), media timeline. */
  liveEdgeS?: number | undefined;
  /** The player's own target distance to the edge (hls.js targetLatency), read, never set. */
  targetLatencyS?: number | undefined;
}

/** Gaps smaller than this are jumped by hls.js (its maxBufferHole default), so they don't end the buffer. */
const BUFFER_HOLE_S = 0.1;

export function bufferedUntil(buffered: TimeRangesLike, positionS: number): number {
  let until = positionS;
  for (let i = 0; i < buffered.length; i++) {
    if (buffered.start(i) <= until + BUFFER_HOLE_S && buffered.end(i) > until) until = buffered.end(i);
  }
  return until;
}

export function playbackState(inputs: PlaybackInputs): PlaybackReport {
  const state: PlaybackReport = {
    positionS: inputs.currentTime,
    rate: inputs.paused ? 0 : Math.max(0, inputs.playbackRate),
    bufferedUntilS: bufferedUntil(inputs.buffered, inputs.currentTime),
    isLive: inputs.isLive,
  };
  if (inputs.isLive && Number.isFinite(inputs.liveEdgeS)) state.liveEdgeS = inputs.liveEdgeS;
  if (inputs.isLive && Number.isFinite(inputs.targetLatencyS)) state.targetLatencyS = inputs.targetLatencyS;
  return state;
}
