// The test origin: serves the sample stream as VOD and as a simulated live stream, counts every
// byte it sends (the ground truth for offload), and injects faults on demand.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { parseMediaPlaylist, renderLivePlaylist, type MediaPlaylist } from './hls-playlist.js';
import { defaultMediaDir, ensureSampleMedia, sampleMediaSpec } from './sample-media.js';

export interface OriginFaults {
  /** Added before every response, ms. */
  latencyMs?: number;
  /** Fraction (0..1) of segment requests answered 503. */
  errorRate?: number;
  /** Per-connection bandwidth cap for segment bodies, bytes/s. */
  bytesPerSecond?: number;
}

export interface OriginOptions {
  host?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  mediaDir?: string;
  /** Live segments in the playlist window. Default 10. */
  liveWindowSize?: number;
  /** Wall-clock start (ms) of live segment 0. Default: a full window before start-up. */
  liveEpochMs?: number;
  faults?: OriginFaults;
  /** Clock for the live edge; injectable for tests. */
  now?: () => number;
  /** Random source for the error rate; injectable for tests. */
  random?: () => number;
}

export interface TransferCount {
  requests: number;
  bytes: number;
}

export interface OriginStats {
  segments: TransferCount;
  playlists: TransferCount;
  /** WebVTT subtitle files: players fetch them with their own loader, never from peers. */
  subtitles: TransferCount;
  /** Per segment path: requests and body bytes sent. */
  segmentsByPath: Record<string, TransferCount & { size: number }>;
  /** Sum of the full sizes of every distinct segment requested at least once. */
  distinctSegmentBytes: number;
  injectedErrors: number;
  notFound: number;
}

export interface Origin {
  url: string;
  port: number;
  stats(): OriginStats;
  resetStats(): void;
  setFaults(faults: OriginFaults): void;
  /** Live sequence number of the newest available segment, now. */
  liveEdgeSequence(): number;
  close(): Promise<void>;
}

const contentTypes: Record<string, string> = {
  m3u8: 'application/vnd.apple.mpegurl',
  ts: 'video/mp2t',
  vtt: 'text/vtt; charset=utf-8',
  json: 'application/json',
};

interface ByteSlice {
  start: number;
  end: number; // exclusive
}

/** Parses a single-range `Range` header. `null`: ignore it; `'unsatisfiable'`: answer 416. */
export function parseRange(header: string | undefined, size: number): ByteSlice | null | 'unsatisfiable' {
  if (!header) return null;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match) return null; // multi-range or malformed: serve the whole body, as RFC 9110 allows
  const [, first, last] = match;
  if (first === '' && last === '') return null;
  let start: number;
  let end: number;
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0) return 'unsatisfiable';
    start = Math.max(0, size - suffix);
    end = size;
  } else {
    start = Number(first);
    end = last === '' ? size : Math.min(size, Number(last) + 1);
  }
  if (start >= size || end <= start) return 'unsatisfiable';
  return { start, end };
}

/** Live segment n of a rendition: unique across renditions, like the VOD files. */
export const liveSegmentName = (rendition: string, sequence: number) => `${rendition}-${sequence}.ts`;
/** Live subtitle file n of a language (`en-1234.vtt`): the looped VOD file's cues. */
export const liveSubtitleName = (language: string, sequence: number) => `${language}-${sequence}.vtt`;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function startOrigin(options: OriginOptions = {}): Promise<Origin> {
  const mediaDir = ensureSampleMedia(options.mediaDir ?? defaultMediaDir());
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const windowSize = options.liveWindowSize ?? 10;
  let faults: OriginFaults = { ...options.faults };

  const master = readFileSync(join(mediaDir, 'master.m3u8'));
  const renditions = new Map<string, MediaPlaylist>();
  for (const { name } of sampleMediaSpec.renditions) {
    renditions.set(name, parseMediaPlaylist(readFileSync(join(mediaDir, name, 'index.m3u8'), 'utf8')));
  }
  // Subtitle renditions by directory name, with the language their live files are named after.
  const subtitleTracks = new Map<string, { language: string; playlist: MediaPlaylist }>();
  for (const { name, language } of sampleMediaSpec.subtitles) {
    subtitleTracks.set(name, { language, playlist: parseMediaPlaylist(readFileSync(join(mediaDir, name, 'index.m3u8'), 'utf8')) });
  }
  const anyRendition = renditions.values().next().value as MediaPlaylist;
  const segmentMs = (anyRendition.segments.reduce((sum, s) => sum + s.durationS, 0) / anyRendition.segments.length) * 1000;
  const liveEpochMs = options.liveEpochMs ?? now() - windowSize * segmentMs;
  const liveEdgeSequence = () => Math.max(-1, Math.floor((now() - liveEpochMs) / segmentMs) - 1);

  const files = new Map<string, Buffer>();
  const readMedia = (relativePath: string): Buffer | undefined => {
    let body = files.get(relativePath);
    if (!body) {
      try {
        body = readFileSync(join(mediaDir, relativePath));
      } catch {
        return undefined;
      }
      files.set(relativePath, body);
    }
    return body;
  };

  // SHA-256 manifests in PeerTube's format ({file name: hex digest}), for peers to verify
  // segments against: VOD lists every file, live the current window and the one before it.
  const sha256 = (body: Buffer) => createHash('sha256').update(body).digest('hex');
  const vodHashes: Record<string, string> = {};
  for (const [name, playlist] of renditions) {
    for (const segment of playlist.segments) vodHashes[segment.uri] = sha256(readMedia(`${name}/${segment.uri}`)!);
  }
  const liveHashes = () => {
    const hashes: Record<string, string> = {};
    const newest = liveEdgeSequence();
    for (const [name, playlist] of renditions) {
      for (let sequence = Math.max(0, newest - 2 * windowSize + 1); sequence <= newest; sequence += 1) {
        hashes[liveSegmentName(name, sequence)] = vodHashes[playlist.segments[sequence % playlist.segments.length]!.uri]!;
      }
    }
    return hashes;
  };

  let stats: OriginStats;
  const resetStats = () => {
    stats = {
      segments: { requests: 0, bytes: 0 },
      playlists: { requests: 0, bytes: 0 },
      subtitles: { requests: 0, bytes: 0 },
      segmentsByPath: {},
      distinctSegmentBytes: 0,
      injectedErrors: 0,
      notFound: 0,
    };
  };
  resetStats();

  type Resolved = { body: Buffer; kind: 'segment' | 'playlist' | 'subtitle'; type: string; cacheControl: string } | undefined;
  const livePlaylist = (playlist: MediaPlaylist, segmentUri: (sequence: number) => string): Resolved => {
    const newest = liveEdgeSequence();
    if (newest < 0) return undefined;
    const text = renderLivePlaylist({
      segments: playlist.segments,
      targetDurationS: playlist.targetDurationS,
      windowSize,
      newestSequence: newest,
      epochMs: liveEpochMs,
      segmentUri,
    });
    // A live playlist may be cached for at most half a target duration, like a real origin.
    const maxAge = Math.max(1, Math.floor(playlist.targetDurationS / 2));
    return { body: Buffer.from(text), kind: 'playlist', type: contentTypes.m3u8!, cacheControl: `public, max-age=${maxAge}` };
  };
  /** A subtitle rendition's playlist or .vtt file, VOD or live (the live window over the looped files). */
  const resolveSubtitles = (mode: string, track: { language: string; playlist: MediaPlaylist }, directory: string, file: string): Resolved => {
    if (mode === 'live' && file === 'index.m3u8') return livePlaylist(track.playlist, (sequence) => liveSubtitleName(track.language, sequence));
    let relativePath: string | undefined;
    if (mode === 'vod') {
      relativePath = file === 'index.m3u8' || /^[\w-]+\.vtt$/.test(file) ? `${directory}/${file}` : undefined;
    } else {
      const match = /^[\w-]+-(\d+)\.vtt$/.exec(file);
      const sequence = Number(match?.[1]);
      if (match && file === liveSubtitleName(track.language, sequence) && sequence <= liveEdgeSequence()) {
        relativePath = `${directory}/${track.playlist.segments[sequence % track.playlist.segments.length]!.uri}`;
      }
    }
    const body = relativePath === undefined ? undefined : readMedia(relativePath);
    if (!body) return undefined;
    if (file.endsWith('.m3u8')) return { body, kind: 'playlist', type: contentTypes.m3u8!, cacheControl: 'public, max-age=60' };
    return { body, kind: 'subtitle', type: contentTypes.vtt!, cacheControl: mode === 'vod' ? 'public, max-age=31536000, immutable' : 'public, max-age=3600' };
  };
  const resolve = (path: string): Resolved => {
    const parts = path.split('/').filter(Boolean);
    const [mode, rendition, file] = parts;
    if ((mode === 'vod' || mode === 'live') && parts.length === 2 && rendition === 'master.m3u8') {
      return { body: master, kind: 'playlist', type: contentTypes.m3u8!, cacheControl: 'public, max-age=60' };
    }
    if ((mode === 'vod' || mode === 'live') && parts.length === 2 && rendition === 'segments-sha256.json') {
      const body = Buffer.from(JSON.stringify(mode === 'vod' ? vodHashes : liveHashes()));
      return { body, kind: 'playlist', type: contentTypes.json!, cacheControl: mode === 'vod' ? 'public, max-age=60' : 'public, max-age=1' };
    }
    if (parts.length !== 3 || !rendition || !file) return undefined;
    const subtitleTrack = subtitleTracks.get(rendition);
    if ((mode === 'vod' || mode === 'live') && subtitleTrack) return resolveSubtitles(mode, subtitleTrack, rendition, file);
    if (!renditions.has(rendition)) return undefined;
    if (mode === 'vod') {
      const body = /^(index\.m3u8|[\w-]+\.ts)$/.test(file) ? readMedia(`${rendition}/${file}`) : undefined;
      if (!body) return undefined;
      const isPlaylist = file.endsWith('.m3u8');
      return {
        body,
        kind: isPlaylist ? 'playlist' : 'segment',
        type: isPlaylist ? contentTypes.m3u8! : contentTypes.ts!,
        cacheControl: isPlaylist ? 'public, max-age=60' : 'public, max-age=31536000, immutable',
      };
    }
    if (mode !== 'live') return undefined;
    const playlist = renditions.get(rendition)!;
    if (file === 'index.m3u8') return livePlaylist(playlist, (sequence) => liveSegmentName(rendition, sequence));
    const match = /^[\w]+-(\d+)\.ts$/.exec(file);
    if (!match || file !== liveSegmentName(rendition, Number(match[1]))) return undefined;
    const sequence = Number(match[1]);
    if (sequence > liveEdgeSequence()) return undefined; // not produced yet
    const loopIndex = sequence % playlist.segments.length;
    const body = readMedia(`${rendition}/${playlist.segments[loopIndex]!.uri}`);
    return body && { body, kind: 'segment', type: contentTypes.ts!, cacheControl: 'public, max-age=3600' };
  };

  const writeBody = async (res: ServerResponse, body: Buffer, onSent: (bytes: number) => void) => {
    const cap = faults.bytesPerSecond;
    const chunkSize = cap ? Math.max(1024, Math.min(16_384, Math.floor(cap / 10))) : 65_536;
    const startedMs = Date.now();
    let sent = 0;
    for (let offset = 0; offset < body.length; offset += chunkSize) {
      if (res.destroyed) return;
      const chunk = body.subarray(offset, offset + chunkSize);
      // Counted when the chunk reaches the socket, so an aborted download counts what was sent.
      const flushed = new Promise<boolean>((done) => {
        res.write(chunk, (error) => {
          if (!error) onSent(chunk.length);
          done(!error);
        });
      });
      if (!(await flushed)) return;
      sent += chunk.length;
      if (cap) {
        const aheadMs = (sent / cap) * 1000 - (Date.now() - startedMs);
        if (aheadMs > 0) await sleep(aheadMs);
      }
    }
    res.end();
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Access-Control-Allow-Headers', 'Range');
    res.setHeader('Access-Control-Expose-Headers', 'Content-Length, Content-Range, Accept-Ranges');
    const url = new URL(req.url ?? '/', 'http://origin');
    if (req.method === 'OPTIONS') {
      res.writeHead(204, { 'Access-Control-Allow-Methods': 'GET, HEAD, OPTIONS', 'Access-Control-Max-Age': '600' }).end();
      return;
    }
    if (url.pathname.startsWith('/__origin/')) {
      handleControl(url.pathname, req, res);
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD, OPTIONS' }).end();
      return;
    }
    if (faults.latencyMs) await sleep(faults.latencyMs);
    const resolved = resolve(url.pathname);
    if (!resolved) {
      stats.notFound += 1;
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
      return;
    }
    if (resolved.kind === 'segment' && faults.errorRate && random() < faults.errorRate) {
      stats.injectedErrors += 1;
      res.writeHead(503, { 'Content-Type': 'text/plain', 'Retry-After': '1' }).end('injected fault');
      return;
    }
    const { body } = resolved;
    const range = resolved.kind === 'segment' ? parseRange(req.headers.range, body.length) : null;
    if (range === 'unsatisfiable') {
      res.writeHead(416, { 'Content-Range': `bytes */${body.length}` }).end();
      return;
    }
    const slice = range ?? { start: 0, end: body.length };
    const headers: Record<string, string | number> = {
      'Content-Type': resolved.type,
      'Content-Length': slice.end - slice.start,
      'Cache-Control': resolved.cacheControl,
      'Accept-Ranges': resolved.kind === 'segment' ? 'bytes' : 'none',
    };
    if (range) headers['Content-Range'] = `bytes ${range.start}-${range.end - 1}/${body.length}`;
    res.writeHead(range ? 206 : 200, headers);
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    const count = resolved.kind === 'segment' ? stats.segments : resolved.kind === 'subtitle' ? stats.subtitles : stats.playlists;
    count.requests += 1;
    let perPath: (TransferCount & { size: number }) | undefined;
    if (resolved.kind === 'segment') {
      perPath = stats.segmentsByPath[url.pathname];
      if (!perPath) {
        perPath = { requests: 0, bytes: 0, size: body.length };
        stats.segmentsByPath[url.pathname] = perPath;
        stats.distinctSegmentBytes += body.length;
      }
      perPath.requests += 1;
    }
    await writeBody(res, body.subarray(slice.start, slice.end), (bytes) => {
      count.bytes += bytes;
      if (perPath) perPath.bytes += bytes;
    });
  };

  const handleControl = (path: string, req: IncomingMessage, res: ServerResponse) => {
    const json = (status: number, value: unknown) =>
      res.writeHead(status, { 'Content-Type': contentTypes.json!, 'Cache-Control': 'no-store' }).end(JSON.stringify(value));
    if (path === '/__origin/stats' && req.method === 'GET') return json(200, stats);
    if (path === '/__origin/reset' && req.method === 'POST') {
      resetStats();
      return json(200, stats);
    }
    if (path === '/__origin/faults' && req.method === 'POST') {
      let text = '';
      req.on('data', (chunk: Buffer) => (text += chunk.toString()));
      req.on('end', () => {
        try {
          faults = { ...JSON.parse(text || '{}') };
          json(200, faults);
        } catch (error) {
          json(400, { error: `faults must be JSON: ${(error as Error).message}` });
        }
      });
      return;
    }
    return json(404, { error: `unknown control path ${path}` });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain' });
      res.end(`origin error: ${(error as Error).message}`);
    });
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolveListen());
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host ?? '127.0.0.1';
  return {
    url: `http://${host}:${port}`,
    port,
    stats: () => structuredClone(stats),
    resetStats,
    setFaults: (next) => {
      faults = { ...next };
    },
    liveEdgeSequence,
    close: () =>
      new Promise<void>((resolveClose) => {
        server.close(() => resolveClose());
        server.closeAllConnections();
      }),
  };
}
