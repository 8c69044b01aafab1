// hls.js's subtitle renditions (and in-band CEA-608 captions) as video.js text tracks, so that
// video.js's captions menu lists them and draws their cues like any other track. hls.js runs with
// `renderTextTracksNatively: false`: it loads and parses the WebVTT files of the selected
// rendition and hands the cues over; this module owns the tracks, adds the cues, and tells hls.js
// which rendition to load when a viewer (or setCaption) picks a track.
import Hls from 'hls.js';
import type { CuesParsedData, NonNativeTextTrack, SubtitleTrackSwitchData } from 'hls.js';
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

/** Binds one hls.js instance to one tech's text tracks until `dispose`. */
export function bindSubtitles(hls: Hls, owner: TextTrackOwner): SubtitleBinding {
  return new SubtitleTracks(hls, owner);
}

class SubtitleTracks implements SubtitleBinding {
  /** By hls.js's name for the track's cues. */
  private readonly owned = new Map<string, OwnedTrack>();
  private readonly list: TextTrackListLike;
  private selectionQueued = false;
  private disposed = false;

  constructor(
    private readonly hls: Hls,
    private readonly owner: TextTrackOwner,
  ) {
    hls.on(Hls.Events.NON_NATIVE_TEXT_TRACKS_FOUND, this.onTracksFound);
    hls.on(Hls.Events.CUES_PARSED, this.onCues);
    hls.on(Hls.Events.SUBTITLE_TRACK_SWITCH, this.onSwitch);
    this.list = owner.textTracks();
    this.list.addEventListener('change', this.onTrackChange);
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.hls.off(Hls.Events.NON_NATIVE_TEXT_TRACKS_FOUND, this.onTracksFound);
    this.hls.off(Hls.Events.CUES_PARSED, this.onCues);
    this.hls.off(Hls.Events.SUBTITLE_TRACK_SWITCH, this.onSwitch);
    this.list.removeEventListener('change', this.onTrackChange);
    for (const name of [...this.owned.keys()]) this.remove(name);
  }

  private readonly onTracksFound = (_event: string, { tracks }: { tracks: NonNativeTextTrack[] }) => {
    if (this.disposed) return;
    // A list of subtitle renditions replaces the previous one (another SUBTITLES group); in-band
    // captions come one at a time, keyed by hls.js's own id.
    if (tracks.some((found) => found.subtitleTrack)) {
      for (const [name, entry] of this.owned) if (entry.hlsIndex !== null) this.remove(name);
    }
    tracks.forEach((found, index) => {
      if (found.subtitleTrack) this.add(cueTrackName(found, index), found, index);
      else if (found._id && !this.owned.has(found._id)) this.add(found._id, found, null);
    });
    // A track may have been turned on as it was added (a preferred language), before video.js
    // listened to its mode.
    this.onTrackChange();
  };

  private readonly onCues = (_event: string, { cues, track: name }: CuesParsedData) => {
    const entry = this.owned.get(name);
    if (!entry || this.disposed) return;
    for (const cue of cues as VTTCue[]) {
      // hls.js parses a file again after some seeks: a cue is added once.
      const id = cue.id || `${cue.startTime}-${cue.endTime}-${cue.text}`;
      if (entry.cueIds.has(id)) continue;
      entry.cueIds.add(id);
      entry.track.addCue(cue);
    }
  };

  /** hls.js picked a rendition itself (DEFAULT=YES, subtitlePreference): the menu shows it. */
  private readonly onSwitch = (_event: string, { id }: SubtitleTrackSwitchData) => {
    for (const entry of this.owned.values()) {
      if (entry.hlsIndex === null) continue;
      if (entry.hlsIndex === id && entry.track.mode === 'disabled') entry.track.mode = 'showing';
      else if (entry.hlsIndex !== id && entry.track.mode === 'showing') entry.track.mode = 'disabled';
    }
  };

  /**
   * A viewer picked a track (video.js's menu turns one on and the others off, one change each):
   * once the modes have settled, hls.js loads the chosen rendition, or none.
   */
  private readonly onTrackChange = () => {
    if (this.selectionQueued) return;
    this.selectionQueued = true;
    queueMicrotask(() => this.applySelection());
  };

  private applySelection(): void {
    this.selectionQueued = false;
    if (this.disposed) return;
    const subtitles = [...this.owned.values()].filter((entry) => entry.hlsIndex !== null);
    const chosen = subtitles.find((entry) => entry.track.mode === 'showing') ?? subtitles.find((entry) => entry.track.mode === 'hidden');
    const wanted = chosen?.hlsIndex ?? -1;
    if (subtitles.length > 0 && this.hls.subtitleTrack !== wanted) this.hls.subtitleTrack = wanted;
  }

  private add(name: string, found: NonNativeTextTrack, hlsIndex: number | null): void {
    const language = found.subtitleTrack?.lang ?? found.closedCaptions?.lang ?? '';
    const kind = found.kind === 'captions' ? 'captions' : 'subtitles';
    const label = String(found.label || language || name);
    const { track } = this.owner.addRemoteTextTrack({ kind, label, language, id: `shoal-${name}` }, true);
    this.owned.set(name, { track, hlsIndex, cueIds: new Set() });
    if (hlsIndex !== null && hlsIndex === this.hls.subtitleTrack) track.mode = 'showing';
  }

  private remove(name: string): void {
    const entry = this.owned.get(name);
    this.owned.delete(name);
    if (!entry) return;
    try {
      this.owner.removeRemoteTextTrack(entry.track);
    } catch {
      // The tech is already gone (the player was disposed): so are its tracks.
    }
  }
}
