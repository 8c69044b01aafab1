// The sample stream's WebVTT subtitle renditions: one media playlist per language with one .vtt
// file per video segment, and the EXT-X-MEDIA group in the master playlist that names them.
// Written beside ffmpeg's output; every cue says which segment it belongs to, so a test can tell
// from the words on screen whether the right cue shows at the right time.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseMediaPlaylist } from './hls-playlist.js';

export interface SubtitleSpec {
  /** Directory (under the stream) and EXT-X-MEDIA URI's folder: `subtitles-en`. */
  name: string;
  /** BCP 47 language tag (LANGUAGE=). */
  language: string;
  /** NAME= in the master playlist: what a captions menu shows. */
  label: string;
  /** Cue text of segment n, e.g. `English cue 7`. */
  cueWord: string;
}

export const subtitleGroupId = 'subs';

/** `en-007.vtt`: file names unique across renditions, as the video segments' are. */
export const subtitleFileName = (language: string, index: number) => `${language}-${String(index).padStart(3, '0')}.vtt`;

/** The words of the cue shown during segment `index` (seconds 2·index to 2·index + 2). */
export const subtitleCueText = (spec: Pick<SubtitleSpec, 'cueWord'>, index: number) => `${spec.cueWord} ${index}`;

const timestamp = (seconds: number) => {
  const totalMs = Math.round(seconds * 1000);
  const hours = Math.floor(totalMs / 3_600_000);
  const minutes = Math.floor((totalMs % 3_600_000) / 60_000);
  const secs = (totalMs % 60_000) / 1000;
  return `${String(hours).padStart(2, '0')}:${String(minutes).padStart(2, '0')}:${secs.toFixed(3).padStart(6, '0')}`;
};

/**
 * The 90 kHz MPEG-TS timestamp where the stream's media timeline begins (the first segment's
 * earliest PTS, as ffprobe reads it): the X-TIMESTAMP-MAP of every .vtt file, so that players
 * place cue time 0 at the start of the video, not 1.4 s before it (ffmpeg's mux delay).
 */
export function firstPts90k(segmentPath: string): number {
  const probe = spawnSync('ffprobe', ['-v', 'error', '-show_entries', 'format=start_time', '-of', 'csv=p=0', segmentPath], { encoding: 'utf8' });
  const seconds = Number.parseFloat(probe.stdout);
  if (probe.status !== 0 || !Number.isFinite(seconds)) {
    throw new Error(`ffprobe could not read the start time of ${segmentPath} (exit ${probe.status}): ${probe.stderr.trim().slice(-400)}`);
  }
  return Math.round(seconds * 90_000);
}

/**
 * Writes `<dir>/<name>/index.m3u8` and its .vtt files for each subtitle spec, with the segment
 * durations of the main rendition's playlist, and adds the SUBTITLES group to the master playlist.
 */
export function writeSubtitleRenditions(dir: string, mainRendition: string, subtitles: readonly SubtitleSpec[]): void {
  const main = parseMediaPlaylist(readFileSync(join(dir, mainRendition, 'index.m3u8'), 'utf8'));
  const mpegts = firstPts90k(join(dir, mainRendition, main.segments[0]!.uri));
  for (const spec of subtitles) {
    mkdirSync(join(dir, spec.name), { recursive: true });
    const lines = ['#EXTM3U', '#EXT-X-VERSION:3', `#EXT-X-TARGETDURATION:${main.targetDurationS}`, '#EXT-X-MEDIA-SEQUENCE:0', '#EXT-X-PLAYLIST-TYPE:VOD'];
    let startS = 0;
    main.segments.forEach((segment, index) => {
      const endS = startS + segment.durationS;
      const file = subtitleFileName(spec.language, index);
      const vtt = ['WEBVTT', `X-TIMESTAMP-MAP=MPEGTS:${mpegts},LOCAL:00:00:00.000`, '', `${timestamp(startS)} --> ${timestamp(endS)}`, subtitleCueText(spec, index), ''];
      writeFileSync(join(dir, spec.name, file), vtt.join('\n'));
      lines.push(`#EXTINF:${segment.durationS.toFixed(6)},`, file);
      startS = endS;
    });
    lines.push('#EXT-X-ENDLIST', '');
    writeFileSync(join(dir, spec.name, 'index.m3u8'), lines.join('\n'));
  }
  const masterPath = join(dir, 'master.m3u8');
  const media = subtitles.map(
    (spec) =>
      `#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="${subtitleGroupId}",NAME="${spec.label}",LANGUAGE="${spec.language}",DEFAULT=NO,AUTOSELECT=YES,URI="${spec.name}/index.m3u8"`,
  );
  // DEFAULT=NO: players load no subtitles until a viewer picks a language.
  const master = readFileSync(masterPath, 'utf8')
    .replace(/^(#EXT-X-VERSION:\d+)$/m, `$1\n${media.join('\n')}`)
    .replace(/^(#EXT-X-STREAM-INF:.*)$/gm, `$1,SUBTITLES="${subtitleGroupId}"`);
  writeFileSync(masterPath, master);
}
