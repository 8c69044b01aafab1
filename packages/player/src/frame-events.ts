// The events the iframe embed sends its host: the player's own (playing, pause, ended, error,
// volume, rate), the changes it derives (state, resolutions, captions), and the periodic status
// and stats.
import { watchCaptions, type HasTextTracks } from './captions.js';
import type { FrameEvent, FrameEventData, PlaybackStatus } from './frame-protocol.js';
import { playbackStateEvents } from './playback-state.js';
import type { ShoalPlayer } from './player.js';

const statsIntervalMs = 1_000;
const statusIntervalMs = 500;

export type Emit = <E extends FrameEvent>(event: E, data?: FrameEventData[E]) => void;

function statusOf(player: ShoalPlayer): PlaybackStatus {
  return {
    state: player.getState(),
    currentTime: player.getCurrentTime(),
    duration: player.getDuration(),
    volume: player.getVolume(),
    muted: player.isMuted(),
    playbackRate: player.getPlaybackRate(),
    resolutionId: player.getResolutions().find((resolution) => resolution.active)?.id ?? null,
  };
}

/** Emits `event` with `value()` whenever the value's JSON differs from the last one emitted. */
function onChange<T>(value: () => T, emit: (value: T) => void): () => void {
  let last = '';
  return () => {
    const current = value();
    const text = JSON.stringify(current);
    if (text === last) return;
    last = text;
    emit(current);
  };
}

/** Starts sending the player's events to the host; returns the function that stops it. */
export function forwardPlayerEvents(player: ShoalPlayer, emit: Emit, win: Window): () => void {
  for (const name of ['playing', 'pause', 'ended'] as const) player.on(name, () => emit(name));
  player.on('error', () => {
    const error = player.videojs.error();
    emit('error', { code: `MEDIA_ERR_${error?.code ?? 0}`, message: error?.message ?? 'playback failed' });
  });
  let lastState = player.getState();
  const checkState = () => {
    const state = player.getState();
    if (state === lastState) return;
    lastState = state;
    emit('statechange', { state });
  };
  for (const name of playbackStateEvents) player.on(name, checkState);
  player.on('volumechange', () => emit('volumechange', { volume: player.getVolume(), muted: player.isMuted() }));
  player.on('ratechange', () => emit('ratechange', { playbackRate: player.getPlaybackRate() }));
  const checkResolutions = onChange(
    () => player.getResolutions(),
    (resolutions) => emit('resolutionchange', { resolutions }),
  );
  player.on('shoallevels', checkResolutions);
  player.on('shoalsession', checkResolutions);
  const checkCaptions = onChange(
    () => player.getCaptions(),
    (captions) => emit('captionchange', { captions }),
  );
  // video.js hands its text track list over in its constructor: it is the one for the player's life.
  const stopCaptions = watchCaptions(player.videojs as unknown as HasTextTracks, checkCaptions);

  const statsTimer = win.setInterval(() => emit('stats', player.getStats()), statsIntervalMs);
  const statusTimer = win.setInterval(() => {
    checkState();
    emit('status', statusOf(player));
  }, statusIntervalMs);
  return () => {
    win.clearInterval(statsTimer);
    win.clearInterval(statusTimer);
    stopCaptions();
  };
}
