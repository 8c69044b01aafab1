import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { writeSubtitleRenditions } from './sample-subtitles.js';

/** The sample stream's shape. Changing it regenerates the media on the next run. */
export const sampleMediaSpec = {
  version: 4,
  durationS: 60,
  segmentS: 2,
  fps: 30,
  renditions: [
    { name: '180p', width: 320, height: 180, videoKbps: 220 },
    { name: '360p', width: 640, height: 360, videoKbps: 620 },
  ],
  audioKbps: 64,
  /** WebVTT renditions in one SUBTITLES group, none selected by default; cues name their segment. */
  subtitles: [
    { name: 'subtitles-en', language: 'en', label: 'English', cueWord: 'English cue' },
    { name: 'subtitles-fr', language: 'fr', label: 'Français', cueWord: 'Sous-titre' },
  ],
} as const;

export function defaultMediaDir(): string {
  return fileURLToPath(new URL('../media', import.meta.url));
}

function findFont(): string | undefined {
  const candidates = [
    '/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf',
    '/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf',
    '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf',
  ];
  return candidates.find((path) => existsSync(path));
}

/** Throws one clear sentence when ffmpeg is missing. */
export function assertFfmpeg(): void {
  const probe = spawnSync('ffmpeg', ['-hide_banner', '-version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    throw new Error('ffmpeg not found: the sample stream is generated with it. Install it (Debian/Ubuntu: apt-get install -y ffmpeg).');
  }
}

/**
 * Makes the synthetic sample stream (VOD, MPEG-TS, 2 s segments with aligned keyframes, two
 * renditions, a burnt-in clock and frame counter, a beeping tone, English and French WebVTT
 * subtitles) unless it already exists.
 * Generated rather than committed: it is ~8 MB and takes ~6 s on two cores.
 */
export function ensureSampleMedia(dir: string = defaultMediaDir()): string {
  const marker = join(dir, 'spec.json');
  const wanted = JSON.stringify(sampleMediaSpec);
  if (existsSync(marker) && readFileSync(marker, 'utf8') === wanted) return dir;
  assertFfmpeg();
  // Made in a directory of its own and renamed into place, so that concurrent test processes
  // never see (or write into) a half-made stream.
  const work = `${dir}.tmp-${process.pid}`;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  try {
    makeSampleMedia(work);
    writeFileSync(join(work, 'spec.json'), wanted);
    if (existsSync(marker) && readFileSync(marker, 'utf8') === wanted) return dir; // another process won
    rmSync(dir, { recursive: true, force: true });
    try {
      renameSync(work, dir);
    } catch (error) {
      if (!(existsSync(marker) && readFileSync(marker, 'utf8') === wanted)) throw error;
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return dir;
}

function makeSampleMedia(dir: string): void {
  const spec = sampleMediaSpec;
  const font = findFont();
  const largest = spec.renditions[spec.renditions.length - 1]!;
  // '\\:' escapes the colon inside the drawtext expression for ffmpeg's filter parser.
  const text = `drawtext=${font ? `fontfile=${font}:` : ''}text='%{pts\\:hms}  frame %{frame_num}':x=16:y=h-th-16:fontsize=${Math.round(largest.height / 10)}:fontcolor=white:box=1:boxcolor=black@0.6`;
  const splits = spec.renditions.map((_, index) => `[s${index}]`).join('');
  const scales = spec.renditions.map((r, index) => `[s${index}]scale=${r.width}:${r.height}[v${index}]`).join(';');
  const args = [
    '-hide_banner', '-loglevel', 'error', '-y',
    '-f', 'lavfi', '-i', `testsrc2=size=${largest.width}x${largest.height}:rate=${spec.fps}`,
    '-f', 'lavfi', '-i', 'sine=frequency=440:beep_factor=4:sample_rate=48000',
    '-t', String(spec.durationS),
    '-filter_complex', `[0:v]${text},split=${spec.renditions.length}${splits};${scales}`,
  ];
  spec.renditions.forEach((_, index) => args.push('-map', `[v${index}]`));
  spec.renditions.forEach(() => args.push('-map', '1:a'));
  const gop = String(spec.fps * spec.segmentS);
  args.push('-c:v', 'libx264', '-preset', 'veryfast', '-profile:v', 'main', '-pix_fmt', 'yuv420p');
  args.push('-g', gop, '-keyint_min', gop, '-sc_threshold', '0');
  spec.renditions.forEach((r, index) => {
    args.push(`-b:v:${index}`, `${r.videoKbps}k`, `-maxrate:v:${index}`, `${Math.round(r.videoKbps * 1.1)}k`, `-bufsize:v:${index}`, `${r.videoKbps * 2}k`);
  });
  args.push('-c:a', 'aac', '-b:a', `${spec.audioKbps}k`, '-ac', '2');
  args.push(
    '-f', 'hls', '-hls_time', String(spec.segmentS), '-hls_playlist_type', 'vod',
    '-hls_segment_filename', join(dir, '%v', 'seg%03d.ts'),
    '-master_pl_name', 'master.m3u8',
    '-var_stream_map', spec.renditions.map((r, index) => `v:${index},a:${index},name:${r.name}`).join(' '),
    join(dir, '%v', 'index.m3u8'),
  );
  const run = spawnSync('ffmpeg', args, { encoding: 'utf8' });
  if (run.status !== 0) {
    throw new Error(`ffmpeg failed to make the sample stream (exit ${run.status}): ${run.stderr.trim().slice(-800)}`);
  }
  // Segment file names are made unique across renditions (180p-000.ts), as PeerTube-style
  // SHA-256 manifests key segments by file name. (ffmpeg takes %v only once per path.)
  for (const { name } of spec.renditions) {
    const playlistPath = join(dir, name, 'index.m3u8');
    const playlist = readFileSync(playlistPath, 'utf8');
    for (const [, index] of playlist.matchAll(/^seg(\d+)\.ts$/gm)) {
      renameSync(join(dir, name, `seg${index}.ts`), join(dir, name, `${name}-${index}.ts`));
    }
    writeFileSync(playlistPath, playlist.replace(/^seg(\d+)\.ts$/gm, `${name}-$1.ts`));
  }
  writeSubtitleRenditions(dir, spec.renditions[0]!.name, spec.subtitles);
}
