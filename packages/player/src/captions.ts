// The captions and subtitles a viewer can choose, as ShoalPlayer and the iframe API list them:
// video.js's text tracks of kind 'subtitles' or 'captions', whoever made them (hls.js's subtitle
// renditions through hls-subtitles.ts, the browser's native HLS, or a <track> of the page).
import { PlayerError } from './errors.js';

export interface Caption {
  /** The text track's id: what setCaption() takes. */
  id: string;
  label: string;
  /** BCP 47 tag ('en', 'pt-BR'); '' when the stream names none. */
  language: string;
  kind: 'subtitles' | 'captions';
  /** 'showing' for the track on screen; 'hidden' is loaded but not drawn. */
  mode: TextTrackMode;
}

/** video.js's TextTrackList (or the browser's): indexable, with change/addtrack/removetrack events. */
export interface TextTrackListLike extends ArrayLike<TextTrack> {
  addEventListener(type: 'change' | 'addtrack' | 'removetrack', listener: () => void): void;
  removeEventListener(type: 'change' | 'addtrack' | 'removetrack', listener: () => void): void;
}

export interface HasTextTracks {
  textTracks(): TextTrackListLike;
}

const isCaptionTrack = (track: TextTrack) => track.kind === 'subtitles' || track.kind === 'captions';

function captionTracks(player: HasTextTracks): TextTrack[] {
  const list = player.textTracks();
  return Array.from({ length: list.length }, (_, index) => list[index]!).filter(isCaptionTrack);
}

export function captionList(player: HasTextTracks): Caption[] {
  return captionTracks(player).map((track) => ({
    id: track.id,
    label: track.label,
    language: track.language,
    kind: track.kind as Caption['kind'],
    mode: track.mode,
  }));
}

/** Shows the caption track with this id and turns the others off; null turns them all off. */
export function showCaption(player: HasTextTracks, id: string | null): void {
  const tracks = captionTracks(player);
  if (id !== null && !tracks.some((track) => track.id === id)) {
    const ids = tracks.map((track) => JSON.stringify(track.id)).join(', ');
    throw new PlayerError('INVALID_OPTION', `setCaption: ${JSON.stringify(id)} is not a caption id (${ids ? `ids: ${ids}` : 'this stream has no captions'}; null shows none)`);
  }
  // Off first, then on: one track showing at every moment, as video.js's own menu does it.
  for (const track of tracks) if (track.id !== id && track.mode !== 'disabled') track.mode = 'disabled';
  for (const track of tracks) if (track.id === id) track.mode = 'showing';
}

/** 'en' matches 'en', 'EN', 'en-US'; 'en-US' matches 'en-US' and a track tagged plain 'en'. */
export function matchesLanguage(trackLanguage: string, wanted: string): boolean {
  const track = trackLanguage.trim().toLowerCase();
  const want = wanted.trim().toLowerCase();
  if (track === '' || want === '') return false;
  return track === want || track.startsWith(`${want}-`) || want.startsWith(`${track}-`);
}

/**
 * Shows the first caption track in `language` as soon as one exists (tracks of an HLS stream
 * appear once its playlists are read), unless a track is already showing. Acts once: a viewer
 * who turns it off keeps it off.
 */
export function preferCaptionLanguage(player: HasTextTracks, language: string): () => void {
  const list = player.textTracks();
  const check = () => {
    const tracks = captionTracks(player);
    if (tracks.some((track) => track.mode === 'showing')) return stop();
    const match = tracks.find((track) => matchesLanguage(track.language, language));
    if (!match) return;
    stop();
    showCaption(player, match.id);
  };
  const stop = () => list.removeEventListener('addtrack', checkSoon);
  // video.js fires addtrack before it listens to the new track's mode: choose once it does, or
  // the list would not report the change (and hls.js would not load the rendition).
  const checkSoon = () => void Promise.resolve().then(check);
  list.addEventListener('addtrack', checkSoon);
  check();
  return stop;
}

/** Calls `listener` whenever the caption list or the showing track changes; returns the remover. */
export function watchCaptions(player: HasTextTracks, listener: () => void): () => void {
  const list = player.textTracks();
  for (const type of ['change', 'addtrack', 'removetrack'] as const) list.addEventListener(type, listener);
  return () => {
    for (const type of ['change', 'addtrack', 'removetrack'] as const) list.removeEventListener(type, listener);
  };
}
