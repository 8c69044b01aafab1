// What a player is doing, in the words of YouTube's and PeerTube's embed APIs.
import type { Player } from './video-js-api.js';

export type PlaybackState = 'unstarted' | 'buffering' | 'playing' | 'paused' | 'ended';

/** The video.js events after which the state may have changed. */
export const playbackStateEvents = ['loadstart', 'play', 'playing', 'pause', 'waiting', 'seeking', 'seeked', 'canplay', 'ended'] as const;

export function playbackStateOf(player: Player): PlaybackState {
  if (player.ended()) return 'ended';
  if (player.paused()) return player.hasStarted_ ? 'paused' : 'unstarted';
  // HAVE_FUTURE_DATA (3) or more: frames are coming.
  return player.seeking() || player.readyState() < 3 ? 'buffering' : 'playing';
}
