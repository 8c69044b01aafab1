import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startOrigin, parseRange, type Origin } from '../src/origin.js';
import { parseMediaPlaylist } from '../src/hls-playlist.js';
import { defaultMediaDir, ensureSampleMedia } from '../src/sample-media.js';

let origin: Origin | undefined;
afterEach(async () => {
  await origin?.close();
  origin = undefined;
});
beforeAll(() => {
  ensureSampleMedia();
}, 120_000);

const get = (path: string, headers: Record<string, string> = {}) => fetch(`${origin!.url}${path}`, { headers });
const bytesOf = async (response: Response) => new Uint8Array(await response.arrayBuffer());

describe('sample media', () => {
  it('has two renditions with 2 s segments', () => {
    const master = readFileSync(join(defaultMediaDir(), 'master.m3u8'), 'utf8');
    expect(master.match(/#EXT-X-STREAM-INF/g)).toHaveLength(2);
    const playlist = parseMediaPlaylist(readFileSync(join(defaultMediaDir(), '180p', 'index.m3u8'), 'utf8'));
    expect(playlist.segments.length).toBeGreaterThanOrEqual(30);
    for (const segment of playlist.segments) expect(segment.durationS).toBeCloseTo(2, 2);
  });
});

describe('subtitles', () => {
  it('the master names an English and a French WebVTT rendition, none selected, for both video renditions', () => {
    const master = readFileSync(join(defaultMediaDir(), 'master.m3u8'), 'utf8');
    const media = master.split('\n').filter((line) => line.startsWith('#EXT-X-MEDIA:'));
    expect(media).toHaveLength(2);
    for (const [language, name] of [['en', 'English'], ['fr', 'Français']]) {
      expect(media.find((line) => line.includes(`LANGUAGE="${language}"`))).toMatch(
        new RegExp(`TYPE=SUBTITLES,GROUP-ID="subs",NAME="${name}",.*DEFAULT=NO,.*URI="subtitles-${language}/index.m3u8"`),
      );
    }
    expect(master.match(/#EXT-X-STREAM-INF:.*,SUBTITLES="subs"$/gm)).toHaveLength(2);
  });

  it('serves VOD subtitle files whose cue covers its video segment, counted apart from segments', async () => {
    origin = await startOrigin();
    const playlist = parseMediaPlaylist(await (await get('/vod/subtitles-en/index.m3u8')).text());
    const video = parseMediaPlaylist(readFileSync(join(defaultMediaDir(), '180p', 'index.m3u8'), 'utf8'));
    expect(playlist.segments.map((segment) => segment.durationS)).toEqual(video.segments.map((segment) => segment.durationS));
    const response = await get(`/vod/subtitles-en/${playlist.segments[7]!.uri}`);
    expect(response.headers.get('content-type')).toBe('text/vtt; charset=utf-8');
    const vtt = await response.text();
    expect(vtt).toMatch(/^WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:\d+,LOCAL:00:00:00\.000\n/);
    expect(vtt).toContain('00:00:14.000 --> 00:00:16.000\nEnglish cue 7');
    const stats = origin.stats();
    expect(stats.subtitles).toEqual({ requests: 1, bytes: Buffer.byteLength(vtt) });
    expect(stats.segments.requests).toBe(0);
  });

  it('serves a live subtitle window with the video window’s sequence numbers and the looped files’ cues', async () => {
    let nowMs = 2_000_000;
    origin = await startOrigin({ now: () => nowMs, liveEpochMs: nowMs - 2_000 * 40 });
    const video = parseLive(await (await get('/live/180p/index.m3u8')).text());
    const subtitles = parseLive(await (await get('/live/subtitles-fr/index.m3u8')).text(), 'vtt');
    expect(subtitles).toEqual(video);
    const edge = origin.liveEdgeSequence();
    expect(await (await get(`/live/subtitles-fr/fr-${edge}.vtt`)).text()).toContain(`Sous-titre ${edge % 30}`);
    expect((await get(`/live/subtitles-fr/fr-${edge + 2}.vtt`)).status).toBe(404);
    nowMs += 2_000;
    expect(parseLive(await (await get('/live/subtitles-fr/index.m3u8')).text(), 'vtt').mediaSequence).toBe(video.mediaSequence + 1);
  });
});

describe('live playlist', () => {
  it('advances with the clock and keeps a valid 10-segment window', async () => {
    let nowMs = 1_000_000;
    origin = await startOrigin({ now: () => nowMs, liveEpochMs: nowMs - 20_000 });
    const read = async () => parseLive(await (await get('/live/180p/index.m3u8')).text());
    const first = await read();
    expect(first.sequences).toHaveLength(10);
    expect(first.mediaSequence).toBe(first.sequences[0]);
    expect(first.sequences.at(-1)).toBe(origin.liveEdgeSequence());
    nowMs += 2_000;
    const second = await read();
    expect(second.mediaSequence).toBe(first.mediaSequence + 1);
    // Consecutive sequence numbers, and each one names its own segment URI.
    second.sequences.forEach((sequence, index) => expect(sequence).toBe(second.mediaSequence + index));
  });

  it('tags every loop of the media with a discontinuity and keeps the discontinuity numbering stable', async () => {
    let nowMs = 5_000_000;
    origin = await startOrigin({ now: () => nowMs, liveEpochMs: nowMs - 2_000 * 36 });
    const loop = parseMediaPlaylist(readFileSync(join(defaultMediaDir(), '180p', 'index.m3u8'), 'utf8')).segments.length;
    const discontinuityNumber = new Map<number, number>();
    for (let step = 0; step < 2 * loop; step += 1) {
      const live = parseLive(await (await get('/live/180p/index.m3u8')).text());
      live.sequences.forEach((sequence, index) => {
        const number = live.discontinuityNumbers[index]!;
        if (discontinuityNumber.has(sequence)) expect(number).toBe(discontinuityNumber.get(sequence));
        discontinuityNumber.set(sequence, number);
        expect(number).toBe(Math.floor(sequence / loop));
      });
      nowMs += 2_000;
    }
  });

  it('serves a live segment with the bytes of the looped file and 404s beyond the edge', async () => {
    origin = await startOrigin();
    const edge = origin.liveEdgeSequence();
    const loopFile = readFileSync(join(defaultMediaDir(), '360p', `360p-${String(edge % 30).padStart(3, '0')}.ts`));
    const response = await get(`/live/360p/360p-${edge}.ts`);
    expect(response.status).toBe(200);
    expect(Buffer.from(await bytesOf(response)).equals(loopFile)).toBe(true);
    expect((await get(`/live/360p/360p-${edge + 3}.ts`)).status).toBe(404);
  });
});

describe('byte counters', () => {
  it('count exactly the body bytes of full and Range requests, segments apart from playlists', async () => {
    origin = await startOrigin();
    const file = readFileSync(join(defaultMediaDir(), '180p', '180p-004.ts'));
    const full = await bytesOf(await get('/vod/180p/180p-004.ts'));
    const partial = await get('/vod/180p/180p-004.ts', { Range: 'bytes=1000-4999' });
    expect(partial.status).toBe(206);
    expect(partial.headers.get('content-range')).toBe(`bytes 1000-4999/${file.length}`);
    const partialBytes = await bytesOf(partial);
    expect(Buffer.from(partialBytes).equals(file.subarray(1000, 5000))).toBe(true);
    const suffix = await bytesOf(await get('/vod/180p/180p-004.ts', { Range: 'bytes=-100' }));
    const open = await bytesOf(await get('/vod/180p/180p-004.ts', { Range: `bytes=${file.length - 10}-` }));
    const playlist = await bytesOf(await get('/vod/180p/index.m3u8'));
    const stats = origin.stats();
    expect(full.length).toBe(file.length);
    expect(stats.segments).toEqual({ requests: 4, bytes: file.length + 4000 + 100 + 10 });
    expect(stats.playlists).toEqual({ requests: 1, bytes: playlist.length });
    expect(stats.segmentsByPath['/vod/180p/180p-004.ts']).toEqual({ requests: 4, bytes: file.length + 4110, size: file.length });
    expect(stats.distinctSegmentBytes).toBe(file.length);
    const overHttp = await (await fetch(`${origin.url}/__origin/stats`)).json();
    expect(overHttp.segments.bytes).toBe(stats.segments.bytes);
  });

  it('answers 416 for an unsatisfiable range and counts nothing', async () => {
    origin = await startOrigin();
    const response = await get('/vod/180p/180p-000.ts', { Range: 'bytes=99999999-' });
    expect(response.status).toBe(416);
    expect(origin.stats().segments.bytes).toBe(0);
  });

  it('parses the Range forms HTTP allows', () => {
    expect(parseRange('bytes=0-9', 100)).toEqual({ start: 0, end: 10 });
    expect(parseRange('bytes=90-', 100)).toEqual({ start: 90, end: 100 });
    expect(parseRange('bytes=-5', 100)).toEqual({ start: 95, end: 100 });
    expect(parseRange('bytes=0-999', 100)).toEqual({ start: 0, end: 100 });
    expect(parseRange('bytes=0-1,5-6', 100)).toBeNull();
    expect(parseRange('bytes=100-', 100)).toBe('unsatisfiable');
  });
});

describe('SHA-256 manifests', () => {
  it('list every VOD file and the live window with the digests of their bytes', async () => {
    origin = await startOrigin();
    const vod = await (await get('/vod/segments-sha256.json')).json();
    const file = readFileSync(join(defaultMediaDir(), '360p', '360p-007.ts'));
    expect(vod['360p-007.ts']).toBe(createHash('sha256').update(file).digest('hex'));
    expect(Object.keys(vod)).toHaveLength(60);
    const live = await (await get('/live/segments-sha256.json')).json();
    const edge = origin.liveEdgeSequence();
    const edgeBytes = await bytesOf(await get(`/live/180p/180p-${edge}.ts`));
    expect(live[`180p-${edge}.ts`]).toBe(createHash('sha256').update(edgeBytes).digest('hex'));
    expect(origin.stats().segments.requests).toBe(1);
  });
});

describe('HTTP behaviour', () => {
  it('sends CORS, content types and cache headers like a real origin', async () => {
    origin = await startOrigin();
    const playlist = await get('/live/180p/index.m3u8');
    expect(playlist.headers.get('access-control-allow-origin')).toBe('*');
    expect(playlist.headers.get('content-type')).toBe('application/vnd.apple.mpegurl');
    expect(playlist.headers.get('cache-control')).toBe('public, max-age=1');
    const segment = await get('/vod/360p/360p-000.ts');
    expect(segment.headers.get('content-type')).toBe('video/mp2t');
    expect(segment.headers.get('cache-control')).toContain('immutable');
    const preflight = await fetch(`${origin.url}/vod/360p/360p-000.ts`, { method: 'OPTIONS' });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')).toBe('Range');
  });

  it('injects 5xx errors, latency and a bandwidth cap', async () => {
    origin = await startOrigin({ faults: { errorRate: 1 } });
    expect((await get('/vod/180p/180p-000.ts')).status).toBe(503);
    expect(origin.stats().injectedErrors).toBe(1);
    origin.setFaults({ latencyMs: 300 });
    let startedMs = Date.now();
    await (await get('/vod/180p/index.m3u8')).text();
    expect(Date.now() - startedMs).toBeGreaterThanOrEqual(290);
    origin.setFaults({ bytesPerSecond: 100_000 });
    startedMs = Date.now();
    const body = await bytesOf(await get('/vod/180p/180p-000.ts', { Range: 'bytes=0-49999' }));
    expect(body.length).toBe(50_000);
    // 50 kB at 100 kB/s cannot arrive in much less than half a second.
    expect(Date.now() - startedMs).toBeGreaterThanOrEqual(400);
  });

  it('picks a free port and releases it on close', async () => {
    const first = await startOrigin();
    const { port } = first;
    await first.close();
    origin = await startOrigin({ port });
    expect(origin.port).toBe(port);
  });
});

function parseLive(text: string, extension = 'ts') {
  const lines = text.trim().split('\n');
  const mediaSequence = Number(lines.find((l) => l.startsWith('#EXT-X-MEDIA-SEQUENCE:'))!.split(':')[1]);
  let discontinuity = Number(lines.find((l) => l.startsWith('#EXT-X-DISCONTINUITY-SEQUENCE:'))!.split(':')[1]);
  const sequences: number[] = [];
  const discontinuityNumbers: number[] = [];
  for (const line of lines) {
    if (line === '#EXT-X-DISCONTINUITY') discontinuity += 1;
    if (line.endsWith(`.${extension}`)) {
      sequences.push(Number(/-(\d+)\.\w+$/.exec(line)![1]));
      discontinuityNumbers.push(discontinuity);
    }
  }
  return { mediaSequence, sequences, discontinuityNumbers };
}
