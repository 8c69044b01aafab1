// hls.js's subtitle renditions (and in-band CEA-608 captions) as video.js text tracks, so that
// video.js's captions menu lists them and draws their cues like any other track. hls.js runs with
// `renderTextTracksNatively: false`: it loads and parses the WebVTT files of the selected
// rendition and hands the cues over; this module owns the tracks, adds the cues, and tells hls.js
// which rendition to load when a viewer (or setCaption) picks a track.
import Hls from 'hls.js';
import type { CuesParsedData, NonNativeTextTrack } from 'hls.js';
import type { TextTrackListLike } from './captions.js';

/** What this module needs of a video.js tech (or player): its text track list and remote tracks. */
export interface TextTrackOwner {
  textTracks(): TextTrackListLike;
  addRemoteTextTrack(options: { kind: string; label: string; language: string; id: string }, manualCleanup: boolean): { track: TextTrack };
  removeRemoteTextTrack(track: TextTrack): void;
}

interface OwnedTrack {
  track: TextTrack;
  /** Index in hls.js's subtitleTracks; null for in-band captions (hls.js parses those itself). */
  hlsIndex: number | null;
  cueIds: Set<string>;
}

export interface SubtitleBinding {
  dispose(): void;
}

/** hls.js names a subtitle rendition's cues 'default' (the DEFAULT=YES one) or 'subtitles<index>'. */
export const cueTrackName = (track: Pick<NonNativeTextTrack, 'default'>, index: number) => (track.default ? 'default' : `subtitles${index}`);

export function bindSubtitles(hls: Hls, owner: TextTrackOwner): SubtitleBinding {
  const owned = new Map<string, OwnedTrack>();
  let disposed = false;

  const remove = (name: string) => {
    const entry = owned.get(name);
    owned.delete(name);
    if (!entry) return;
    try {
      owner.removeRemoteTextTrack(entry.track);
    } catch {
      // The tech is already gone (the player was disposed): so are its tracks.
    }
  };
  const add = (name: string, found: NonNativeTextTrack, hlsIndex: number | null) => {
    const language = found.subtitleTrack?.lang ?? found.closedCaptions?.lang ?? '';
    const kind = found.kind === 'captions' ? 'captions' : 'subtitles';
    const label = String(found.label || language || name);
    const { track } = owner.addRemoteTextTrack({ kind, label, language, id: `shoal-${name}` }, true);
    owned.set(name, { track, hlsIndex, cueIds: new Set() });
    if (hlsIndex !== null && hlsIndex === hls.subtitleTrack) track.mode = 'showing';
  };

  const onTracksFound = (_event: string, { tracks }: { tracks: NonNativeTextTrack[] }) => {
    if (disposed) return;
    // A list of subtitle renditions replaces the previous one (another SUBTITLES group); in-band
    // captions come one at a time, keyed by hls.js's own id.
    if (tracks.some((found) => found.subtitleTrack)) {
      for (const [name, entry] of owned) if (entry.hlsIndex !== null) remove(name);
    }
    tracks.forEach((found, index) => {
      if (found.subtitleTrack) add(cueTrackName(found, index), found, index);
      else if (found._id && !owned.has(found._id)) add(found._id, found, null);
    });
    // A track may have been turned on as it was added (a preferred language), before video.js
    // listened to its mode.
    onTrackChange();
  };
  const onCues = (_event: string, { cues, track: name }: CuesParsedData) => {
    const entry = owned.get(name);
    if (!entry || disposed) return;
    for (const cue of cues as VTTCue[]) {
      // hls.js parses a file again after some seeks: a cue is added once.
      const id = cue.id || `${cue.startTime}-${cue.endTime}-${cue.text}`;
      if (entry.cueIds.has(id)) continue;
      entry.cueIds.add(id);
      entry.track.addCue(cue);
    }
  };
  // hls.js picked a rendition itself (DEFAULT=YES, subtitlePreference): the menu shows it.
  const onSwitch = (_event: string, { id }: { id: number }) => {
    for (const entry of owned.values()) {
      if (entry.hlsIndex === null) continue;
      if (entry.hlsIndex === id && entry.track.mode === 'disabled') entry.track.mode = 'showing';
      else if (entry.hlsIndex !== id && entry.track.mode === 'showing') entry.track.mode = 'disabled';
    }
  };

  // A viewer picked a track (video.js's menu turns one on and the others off, one change event
  // each): once the modes have settled, hls.js loads the chosen rendition, or none.
  let selectionQueued = false;
  const applySelection = () => {
    selectionQueued = false;
    if (disposed) return;
    const subtitles = [...owned.values()].filter((entry) => entry.hlsIndex !== null);
    const chosen = subtitles.find((entry) => entry.track.mode === 'showing') ?? subtitles.find((entry) => entry.track.mode === 'hidden');
    const wanted = chosen?.hlsIndex ?? -1;
    if (subtitles.length > 0 && hls.subtitleTrack !== wanted) hls.subtitleTrack = wanted;
  };
  const onTrackChange = () => {
    if (selectionQueued) return;
    selectionQueued = true;
    queueMicrotask(applySelection);
  };

  hls.on(Hls.Events.NON_NATIVE_TEXT_TRACKS_FOUND, onTracksFound);
  hls.on(Hls.Events.CUES_PARSED, onCues);
  hls.on(Hls.Events.SUBTITLE_TRACK_SWITCH, onSwitch);
  const list = owner.textTracks();
  list.addEventListener('change', onTrackChange);
  return {
    dispose() {
      if (disposed) return;
      disposed = true;
      hls.off(Hls.Events.NON_NATIVE_TEXT_TRACKS_FOUND, onTracksFound);
      hls.off(Hls.Events.CUES_PARSED, onCues);
      hls.off(Hls.Events.SUBTITLE_TRACK_SWITCH, onSwitch);
      list.removeEventListener('change', onTrackChange);
      for (const name of [...owned.keys()]) remove(name);
    },
  };
}
