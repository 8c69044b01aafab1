// The shoal-manifest command, run as a publisher runs it: over the repository's sample stream
// (VOD, one shot), over a folder with EXT-X-BYTERANGE segments, and watching a live folder whose
// playlist gains and loses segments.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const bin = fileURLToPath(new URL('../bin/shoal-manifest.js', import.meta.url));
const media = fileURLToPath(new URL('../../../e2e/media', import.meta.url));
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const folders: string[] = [];
const folder = () => {
  const path = mkdtempSync(join(tmpdir(), 'shoal-manifest-'));
  folders.push(path);
  return path;
};
afterEach(() => {
  for (const path of folders.splice(0)) rmSync(path, { recursive: true, force: true });
});
const playlist = (segments: string[], extra = '') =>
  `#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:0\n${segments.map((name) => `#EXTINF:2.0,\n${name}\n`).join('')}${extra}`;

describe('shoal-manifest', () => {
  it('writes the SHA-256 of every segment the sample stream’s playlists list, keyed by file name', () => {
    const out = join(folder(), 'manifest.json');
    const run = spawnSync(process.execPath, [bin, media, '--out', out], { encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    const manifest = JSON.parse(readFileSync(out, 'utf8')) as Record<string, string>;
    // The renditions' segments, and the subtitles' (listed too; harmless: subtitles never come from peers).
    const segments = ['180p', '360p', 'subtitles-en', 'subtitles-fr'].flatMap((rendition) => readdirSync(join(media, rendition)).filter((name) => !name.endsWith('.m3u8')).map((name) => join(media, rendition, name)));
    expect(Object.keys(manifest).sort()).toEqual(segments.map((path) => path.slice(path.lastIndexOf('/') + 1)).sort());
    for (const path of segments) expect(manifest[path.slice(path.lastIndexOf('/') + 1)]).toBe(sha256(readFileSync(path)));
  });

  it('writes byte-range entries with inclusive ends, as PeerTube does', () => {
    const dir = folder();
    const file = new Uint8Array(300).map((_, i) => i % 251);
    writeFileSync(join(dir, 'video.ts'), file);
    writeFileSync(join(dir, 'index.m3u8'), '#EXTM3U\n#EXTINF:2.0,\n#EXT-X-BYTERANGE:100@0\nvideo.ts\n#EXTINF:2.0,\n#EXT-X-BYTERANGE:200\nvideo.ts\n#EXT-X-ENDLIST\n');
    const run = spawnSync(process.execPath, [bin, dir], { encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, 'segments-sha256.json'), 'utf8'))).toEqual({ 'video.ts': { '0-99': sha256(file.subarray(0, 100)), '100-299': sha256(file.subarray(100, 300)) } });
  });

  it('refuses two segments of one name, and says why', () => {
    const dir = folder();
    for (const rendition of ['a', 'b']) {
      spawnSync('mkdir', [join(dir, rendition)]);
      writeFileSync(join(dir, rendition, 'seg-0.ts'), rendition);
      writeFileSync(join(dir, rendition, 'index.m3u8'), playlist(['seg-0.ts']));
    }
    const run = spawnSync(process.execPath, [bin, dir], { encoding: 'utf8' });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/two segments are named seg-0\.ts/);
  });

  it('--watch keeps a live folder’s manifest: segments added as the playlist lists them, dropped once it no longer does', async () => {
    const dir = folder();
    const write = (name: string) => writeFileSync(join(dir, name), `bytes of ${name}`);
    write('live-0.ts');
    write('live-1.ts');
    writeFileSync(join(dir, 'live.m3u8'), playlist(['live-0.ts', 'live-1.ts']));
    const child = spawn(process.execPath, [bin, dir, '--watch', '--interval', '100'], { stdio: 'pipe' });
    const read = () => {
      try {
        return JSON.parse(readFileSync(join(dir, 'segments-sha256.json'), 'utf8')) as Record<string, string>;
      } catch {
        return {};
      }
    };
    const until = async (keys: string[]) => {
      for (let tries = 0; tries < 50 && JSON.stringify(Object.keys(read()).sort()) !== JSON.stringify(keys); tries += 1) await new Promise((r) => setTimeout(r, 100));
      return Object.keys(read()).sort();
    };
    try {
      expect(await until(['live-0.ts', 'live-1.ts'])).toEqual(['live-0.ts', 'live-1.ts']);
      write('live-2.ts');
      writeFileSync(join(dir, 'live.m3u8'), playlist(['live-1.ts', 'live-2.ts']));
      expect(await until(['live-1.ts', 'live-2.ts'])).toEqual(['live-1.ts', 'live-2.ts']);
      expect(read()['live-2.ts']).toBe(sha256(new TextEncoder().encode('bytes of live-2.ts')));
    } finally {
      child.kill('SIGTERM');
    }
  });
});
