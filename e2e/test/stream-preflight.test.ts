import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startOrigin } from '../src/origin.js';
import { defaultMediaDir, ensureSampleMedia } from '../src/sample-media.js';
import { startStaticServer } from '../src/static-server.js';
import { runSwarm } from '../src/swarm/run-swarm.js';
import { scenarios } from '../src/swarm/scenarios.js';
import { PREFLIGHT_ORIGIN, preflightStream, scenarioForStream, StreamCheckError, streamKindOf, type StreamPreflight } from '../src/swarm/stream-preflight.js';

// The swarm runner's check of an external stream, against real HTTP servers on loopback: the
// repository's origin (every header a browser needs), its static file server (no CORS at all),
// and a small server below whose every header can be left out.

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});
beforeAll(() => {
  ensureSampleMedia();
}, 120_000);

interface FixtureOptions {
  /** Access-Control-Allow-Origin on GET answers: '*' (default), another origin, or none. */
  allowOrigin?: string | null;
  /** Leave Access-Control-Allow-Origin off this one resource only. */
  noCorsOn?: 'master' | 'media' | 'segment';
  ranges?: boolean;
  exposeContentRange?: boolean;
  /** Answers OPTIONS with Access-Control-Allow-Headers: Range. */
  allowsRangePreflight?: boolean;
  media?: string;
  master?: string | null;
  segmentStatus?: number;
}

const vodMedia = '#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXTINF:2.0,\nseg-0.ts\n#EXTINF:2.0,\nseg-1.ts\n#EXT-X-ENDLIST\n';
const liveMedia = '#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:40\n#EXTINF:2.0,\nseg-40.ts\n#EXTINF:2.0,\nseg-41.ts\n';
const masterPlaylist = '#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=500000\nmedia/index.m3u8\n';

async function startFixture(options: FixtureOptions = {}): Promise<string> {
  const segment = Buffer.alloc(1000, 7);
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://fixture').pathname;
    const resource = path === '/master.m3u8' ? 'master' : path === '/media/index.m3u8' ? 'media' : path.startsWith('/media/seg-') ? 'segment' : null;
    const allowOrigin = options.allowOrigin === undefined ? '*' : options.allowOrigin;
    if (allowOrigin !== null && resource !== options.noCorsOn) res.setHeader('Access-Control-Allow-Origin', allowOrigin);
    if (options.exposeContentRange !== false) res.setHeader('Access-Control-Expose-Headers', 'Content-Length, Content-Range');
    if (req.method === 'OPTIONS') {
      if (options.allowsRangePreflight === false) res.writeHead(405).end();
      else res.writeHead(204, { 'Access-Control-Allow-Headers': 'Range', 'Access-Control-Allow-Methods': 'GET, HEAD, OPTIONS' }).end();
      return;
    }
    if (resource === 'master' && options.master !== null) res.writeHead(200).end(options.master ?? masterPlaylist);
    else if (resource === 'media') res.writeHead(200).end(options.media ?? vodMedia);
    else if (resource === 'segment' && options.segmentStatus) res.writeHead(options.segmentStatus).end();
    else if (resource === 'segment' && options.ranges !== false && req.headers.range === 'bytes=0-1') res.writeHead(206, { 'Content-Range': `bytes 0-1/${segment.length}` }).end(segment.subarray(0, 2));
    else if (resource === 'segment') res.writeHead(200).end(segment);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const problems = (preflight: StreamPreflight, level: 'error' | 'warning') =>
  preflight.findings.filter((finding) => finding.level === level).map((finding) => `${new URL(finding.url).pathname}: ${finding.problem}`);

describe('stream preflight', () => {
  it('passes the repository origin\'s VOD and live streams, reading each one\'s kind from its media playlist', async () => {
    const origin = await startOrigin();
    closers.push(() => origin.close());
    const vod = await preflightStream(`${origin.url}/vod/master.m3u8`);
    expect(vod).toMatchObject({ playable: true, findings: [], kind: 'vod', kindReason: 'its media playlist says #EXT-X-PLAYLIST-TYPE:VOD' });
    expect(vod.segmentUrl).toMatch(/\/vod\/180p\/180p-000\.ts$/);
    const live = await preflightStream(`${origin.url}/live/master.m3u8`);
    expect(live).toMatchObject({ playable: true, findings: [], kind: 'live' });
    expect(live.kindReason).toContain('no #EXT-X-ENDLIST');
  });

  it('names the missing Access-Control-Allow-Origin (CORS) on each playlist and the segment of a static server without CORS headers, and its lack of Range', async () => {
    const server = await startStaticServer({ mounts: { '/': defaultMediaDir() } });
    closers.push(() => server.close());
    const preflight = await preflightStream(`${server.url}/master.m3u8`);
    expect(preflight.playable).toBe(false);
    expect(preflight.kind).toBe('vod');
    const errors = problems(preflight, 'error');
    expect(errors.map((error) => error.split(':')[0])).toEqual(['/master.m3u8', '/180p/index.m3u8', '/180p/180p-000.ts']);
    for (const error of errors) expect(error).toMatch(/without an Access-Control-Allow-Origin header.*\(CORS\)/);
    expect(preflight.findings.find((finding) => finding.level === 'error')!.fix).toContain('Access-Control-Allow-Origin: *');
    const warnings = problems(preflight, 'warning');
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toContain('a Range request (bytes=0-1) got HTTP 200 with the whole segment');
    expect(warnings[1]).toContain('a CORS preflight for a Range request');
  });

  it('finds nothing to say about a server that sends every header', async () => {
    const preflight = await preflightStream(`${await startFixture()}/master.m3u8`);
    expect(preflight).toMatchObject({ playable: true, findings: [], kind: 'vod' });
    expect(preflight.mediaPlaylistUrl).toMatch(/\/media\/index\.m3u8$/);
    expect(preflight.segmentUrl).toMatch(/\/media\/seg-0\.ts$/);
  });

  it('blames exactly the one resource that lacks Access-Control-Allow-Origin', async () => {
    for (const resource of ['master', 'media', 'segment'] as const) {
      const preflight = await preflightStream(`${await startFixture({ noCorsOn: resource })}/master.m3u8`);
      expect(preflight.playable, resource).toBe(false);
      const errors = problems(preflight, 'error');
      expect(errors, resource).toHaveLength(1);
      expect(errors[0], resource).toContain(`the ${resource === 'segment' ? 'segment' : `${resource} playlist`} comes without an Access-Control-Allow-Origin header`);
    }
  });

  it('refuses an Access-Control-Allow-Origin that names another origin than the viewer pages\'', async () => {
    const preflight = await preflightStream(`${await startFixture({ allowOrigin: 'https://www.example.com' })}/master.m3u8`);
    expect(preflight.playable).toBe(false);
    expect(problems(preflight, 'error')[0]).toContain('allows only the origin "https://www.example.com"');
    const echoing = await preflightStream(`${await startFixture({ allowOrigin: PREFLIGHT_ORIGIN })}/master.m3u8`);
    expect(echoing).toMatchObject({ playable: true, findings: [] });
  });

  it('warns, and still passes, when Range is ignored, Content-Range is not exposed, or a Range preflight is refused', async () => {
    const noRanges = await preflightStream(`${await startFixture({ ranges: false })}/master.m3u8`);
    expect(noRanges.playable).toBe(true);
    expect(problems(noRanges, 'warning')).toEqual([expect.stringContaining('got HTTP 200 with the whole segment')]);
    expect(noRanges.findings[0]!.fix).toContain('Accept-Ranges: bytes');

    const notExposed = await preflightStream(`${await startFixture({ exposeContentRange: false })}/master.m3u8`);
    expect(problems(notExposed, 'warning')).toEqual([expect.stringContaining('Access-Control-Expose-Headers does not name Content-Range')]);

    const noPreflight = await preflightStream(`${await startFixture({ allowsRangePreflight: false })}/master.m3u8`);
    expect(noPreflight.playable).toBe(true);
    expect(problems(noPreflight, 'warning')).toEqual([expect.stringContaining('(HTTP 405, no Access-Control-Allow-Headers naming Range)')]);
    expect(noPreflight.findings[0]!.fix).toContain('Access-Control-Allow-Headers: Range');
  });

  it('says what failed for a server that is not there, a missing playlist, a page that is no playlist, and a missing segment', async () => {
    const gone = await startFixture();
    await closers.pop()!();
    const unreachable = await preflightStream(`${gone}/master.m3u8`);
    expect(problems(unreachable, 'error')).toEqual([expect.stringContaining('the master playlist could not be fetched: ECONNREFUSED')]);
    expect(problems(await preflightStream(`${await startFixture({ master: null })}/master.m3u8`), 'error')).toEqual([expect.stringContaining('answered HTTP 404')]);
    expect(problems(await preflightStream(`${await startFixture({ master: '<html>sign in</html>' })}/master.m3u8`), 'error')).toEqual([
      expect.stringContaining('is not an HLS playlist (its first line is not #EXTM3U)'),
    ]);
    expect(problems(await preflightStream(`${await startFixture({ segmentStatus: 403 })}/master.m3u8`), 'error')).toEqual([
      expect.stringContaining('a segment the playlist lists could not be fetched: HTTP 403'),
    ]);
  });

  it('reads the kind from the media playlist: ENDLIST or PLAYLIST-TYPE:VOD is VOD, anything else live, and checks a live stream\'s newest segment', async () => {
    expect(streamKindOf(vodMedia).kind).toBe('vod');
    expect(streamKindOf(liveMedia).kind).toBe('live');
    expect(streamKindOf(liveMedia.replace('#EXT-X-VERSION:3', '#EXT-X-PLAYLIST-TYPE:VOD'))).toEqual({ kind: 'vod', reason: 'its media playlist says #EXT-X-PLAYLIST-TYPE:VOD' });
    expect(streamKindOf(liveMedia.replace('#EXT-X-VERSION:3', '#EXT-X-PLAYLIST-TYPE:EVENT')).kind).toBe('live');
    const live = await preflightStream(`${await startFixture({ media: liveMedia })}/master.m3u8`);
    expect(live).toMatchObject({ kind: 'live', playable: true });
    expect(live.segmentUrl).toMatch(/\/media\/seg-41\.ts$/);
    // A media playlist given as the stream is its own media playlist.
    const direct = await preflightStream(`${await startFixture()}/media/index.m3u8`);
    expect(direct).toMatchObject({ kind: 'vod', playable: true });
    expect(direct.mediaPlaylistUrl).toBe(direct.masterUrl);
  });

  it('picks the scenario by the stream\'s kind when none is given, and refuses one of the other kind', () => {
    expect(scenarioForStream('vod', 'r', undefined, 'u')).toMatchObject({ scenario: { name: 'vod' }, note: 'the stream is VOD (r): scenario vod' });
    expect(scenarioForStream('live', 'r', undefined, 'u').scenario.name).toBe('live-normal');
    expect(scenarioForStream('live', 'r', scenarios['live-low'], 'u')).toEqual({ scenario: scenarios['live-low'], note: null });
    expect(() => scenarioForStream('vod', 'its media playlist ends with #EXT-X-ENDLIST', scenarios['live-normal'], 'http://s/master.m3u8')).toThrow(
      '--scenario live-normal is for a live stream, but http://s/master.m3u8 is VOD (its media playlist ends with #EXT-X-ENDLIST): use --scenario vod, or leave --scenario out to choose by the stream',
    );
    expect(() => scenarioForStream('live', 'r', scenarios.vod, 'u')).toThrow('use --scenario live-normal or live-high or live-high-half or live-low or churn');
  });
});

describe('swarm runner on an external stream', () => {
  it('stops before any browser starts when the stream has no CORS headers, naming them', async () => {
    const server = await startStaticServer({ mounts: { '/': defaultMediaDir() } });
    closers.push(() => server.close());
    const lines: string[] = [];
    const outDir = mkdtempSync(join(tmpdir(), 'shoal-preflight-'));
    const run = runSwarm({ streamUrl: `${server.url}/master.m3u8`, peers: 2, durationS: 60, engines: ['http', 'shoal'], outDir, log: (line) => lines.push(line) });
    const error = await run.catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(StreamCheckError);
    expect((error as StreamCheckError).code).toBe('STREAM_UNPLAYABLE');
    expect((error as Error).message).toMatch(/no browser was started[\s\S]*Access-Control-Allow-Origin header[\s\S]*\(CORS\)/);
    // No engine run began, and no report was written.
    expect(lines.filter((line) => line.startsWith('=='))).toEqual([]);
    expect(existsSync(join(outDir, 'report.json'))).toBe(false);
  });

  it('refuses a live scenario for a VOD stream, before any browser starts', async () => {
    const origin = await startOrigin();
    closers.push(() => origin.close());
    const run = runSwarm({ scenario: 'live-normal', streamUrl: `${origin.url}/vod/master.m3u8`, peers: 2, durationS: 60, engines: ['http'] });
    await expect(run).rejects.toMatchObject({ code: 'STREAM_KIND_MISMATCH', message: expect.stringContaining('use --scenario vod') });
  });

  it('exits 6 from `npm run swarm` with the CORS findings, and launches nothing', async () => {
    // The CLI runs the build (e2e/dist): the command as a user types it.
    if (!existsSync(fileURLToPath(new URL('../dist/swarm/stream-preflight.js', import.meta.url)))) throw new Error('e2e is not built: run `npm run build`');
    const server = await startStaticServer({ mounts: { '/': defaultMediaDir() } });
    closers.push(() => server.close());
    const bin = fileURLToPath(new URL('../bin/swarm.js', import.meta.url));
    const args = [bin, '--stream', `${server.url}/master.m3u8`, '--peers', '2', '--duration', '60', '--out', mkdtempSync(join(tmpdir(), 'shoal-preflight-'))];
    // Asynchronous: the static server answers from this process.
    const result = await new Promise<{ status: number; stdout: string; stderr: string }>((resolve) =>
      execFile(process.execPath, args, (error, stdout, stderr) => resolve({ status: error ? Number(error.code) : 0, stdout, stderr })),
    );
    expect(result.status).toBe(6);
    expect(result.stderr).toContain('the stream failed its preflight; no browser was started');
    expect(result.stderr).toContain('without an Access-Control-Allow-Origin header');
    expect(result.stderr).toContain('(CORS)');
    expect(result.stderr).not.toContain('    at '); // a message, not a stack
    expect(result.stdout).not.toMatch(/^== /m);
  });
});
