import { describe, expect, it } from 'vitest';
import { captionList, matchesLanguage, preferCaptionLanguage, showCaption, type HasTextTracks } from '../src/captions.js';

/** A text track list as video.js keeps it: tracks with kind, language and a mode, and listeners. */
function trackList(tracks: Array<{ id: string; kind: string; label: string; language: string }>) {
  const list = tracks.map((track) => ({ ...track, mode: 'disabled' as TextTrackMode })) as unknown as TextTrack[];
  const listeners = new Map<string, Set<() => void>>();
  const owner: HasTextTracks = {
    textTracks: () =>
      Object.assign(list, {
        addEventListener: (type: string, listener: () => void) => {
          if (!listeners.has(type)) listeners.set(type, new Set());
          listeners.get(type)!.add(listener);
        },
        removeEventListener: (type: string, listener: () => void) => listeners.get(type)?.delete(listener),
      }),
  };
  const add = (track: { id: string; kind: string; label: string; language: string }) => {
    list.push({ ...track, mode: 'disabled' } as unknown as TextTrack);
    for (const listener of listeners.get('addtrack') ?? []) listener();
  };
  return { owner, list, add, listening: (type: string) => listeners.get(type)?.size ?? 0 };
}

const english = { id: 'en1', kind: 'subtitles', label: 'English', language: 'en' };
const french = { id: 'fr1', kind: 'subtitles', label: 'Français', language: 'fr' };
const chapters = { id: 'ch', kind: 'chapters', label: 'Chapters', language: 'en' };

describe('captions', () => {
  it('lists subtitle and caption tracks only, with their mode', () => {
    const { owner } = trackList([chapters, english, { ...french, kind: 'captions' }]);
    expect(captionList(owner)).toEqual([
      { id: 'en1', label: 'English', language: 'en', kind: 'subtitles', mode: 'disabled' },
      { id: 'fr1', label: 'Français', language: 'fr', kind: 'captions', mode: 'disabled' },
    ]);
  });
  it('shows one track at a time, and none for null', () => {
    const { owner } = trackList([english, french]);
    showCaption(owner, 'fr1');
    expect(captionList(owner).map((caption) => caption.mode)).toEqual(['disabled', 'showing']);
    showCaption(owner, 'en1');
    expect(captionList(owner).map((caption) => caption.mode)).toEqual(['showing', 'disabled']);
    showCaption(owner, null);
    expect(captionList(owner).map((caption) => caption.mode)).toEqual(['disabled', 'disabled']);
  });
  it('refuses an unknown id, naming the ones there are', () => {
    expect(() => showCaption(trackList([english, french]).owner, 'de')).toThrow(/^INVALID_OPTION: setCaption: "de" is not a caption id \(ids: "en1", "fr1"; null shows none\)$/);
    expect(() => showCaption(trackList([]).owner, 'en')).toThrow(/this stream has no captions/);
  });
  it.each([
    ['en', 'en', true],
    ['EN', 'en', true],
    ['en-US', 'en', true],
    ['en', 'en-GB', true],
    ['fr', 'en', false],
    ['eng', 'en', false],
    ['', 'en', false],
  ])('language %j matches the wanted %j: %s', (track, wanted, matches) => {
    expect(matchesLanguage(track, wanted)).toBe(matches);
  });
  it('shows the preferred language once its track appears (after video.js has taken the track in), and only once', async () => {
    const { owner, add, listening } = trackList([english]);
    preferCaptionLanguage(owner, 'fr');
    expect(captionList(owner).every((caption) => caption.mode === 'disabled')).toBe(true);
    add(french);
    expect(captionList(owner).find((caption) => caption.id === 'fr1')?.mode).toBe('disabled');
    await Promise.resolve();
    expect(captionList(owner).find((caption) => caption.id === 'fr1')?.mode).toBe('showing');
    expect(listening('addtrack')).toBe(0);
  });
  it('leaves a track the viewer already shows', async () => {
    const { owner, list, add } = trackList([english]);
    list[0]!.mode = 'showing';
    preferCaptionLanguage(owner, 'fr');
    add(french);
    await Promise.resolve();
    expect(captionList(owner).map((caption) => caption.mode)).toEqual(['showing', 'disabled']);
  });
});
