// The part of a VOD stream a player plays: from `start`, pausing at `stop`, and with `loop` going
// back to `start` (or 0) at `stop` or at the end. Live streams have no fixed timeline to cut, so
// these settings leave them alone.

export interface PlaybackRange {
  /** Seconds; where playback begins. */
  start?: number;
  /** Seconds; where playback pauses (or, with loop, starts again). */
  stop?: number;
  loop?: boolean;
}

/** The few video.js player methods this needs. */
export interface RangePlayer {
  currentTime(): number | undefined;
  currentTime(seconds: number): unknown;
  play(): unknown;
  pause(): unknown;
  on(event: string, listener: () => void): void;
  one(event: string, listener: () => void): void;
}

/**
 * `isLive` says whether the stream is live, undefined while not known (its playlist not read yet);
 * nothing acts until it is known to be VOD. `stop` acts once per pass: a viewer who plays on past
 * it after the pause is not stopped again until playback is brought back before it (a seek, or
 * the loop).
 */
export function applyPlaybackRange(player: RangePlayer, range: PlaybackRange, isLive: () => boolean | undefined): void {
  const { start, stop, loop = false } = range;
  if (start === undefined && stop === undefined && !loop) return;
  const isVod = () => isLive() === false;
  const restart = () => {
    player.currentTime(start ?? 0);
    void Promise.resolve(player.play()).catch(() => undefined);
  };

  if (start !== undefined && start > 0) {
    // Not hls.js's startPosition: on a live stream hls.js would read it as a place in the live
    // window, and whether a stream is live is known only from its playlist. The seek comes before
    // the first frame plays; it costs the first segment or two, already requested by then.
    player.one('loadedmetadata', () => {
      if (isVod() && Math.abs((player.currentTime() ?? 0) - start) > 0.5) player.currentTime(start);
    });
  }
  let stopArmed = true;
  if (stop !== undefined) {
    player.on('timeupdate', () => {
      if (!stopArmed || !isVod() || (player.currentTime() ?? 0) < stop) return;
      stopArmed = false;
      if (loop) restart();
      else player.pause();
    });
    player.on('seeked', () => {
      if ((player.currentTime() ?? 0) < stop) stopArmed = true;
    });
  }
  if (loop) {
    player.on('ended', () => {
      if (isVod()) restart();
    });
  }
}
