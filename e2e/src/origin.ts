// The test origin: serves the sample stream as VOD and as a simulated live stream, counts every
// byte it sends (the ground truth for offload), and injects faults on demand.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { contentTypes, OriginContent, type OriginResource } from './origin-content.js';
import { defaultMediaDir, ensureSampleMedia } from './sample-media.js';

export { liveSegmentName, liveSubtitleName } from './origin-content.js';

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

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const emptyStats = (): OriginStats => ({
  segments: { requests: 0, bytes: 0 },
  playlists: { requests: 0, bytes: 0 },
  subtitles: { requests: 0, bytes: 0 },
  segmentsByPath: {},
  distinctSegmentBytes: 0,
  injectedErrors: 0,
  notFound: 0,
});

/** The HTTP side: CORS, the control paths, faults, Range, and every byte counted as it reaches the socket. */
class OriginHandler {
  stats = emptyStats();

  constructor(
    private readonly content: OriginContent,
    public faults: OriginFaults,
    private readonly random: () => number,
  ) {}

  resetStats(): void {
    this.stats = emptyStats();
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Access-Control-Allow-Headers', 'Range');
    res.setHeader('Access-Control-Expose-Headers', 'Content-Length, Content-Range, Accept-Ranges');
    const url = new URL(req.url ?? '/', 'http://origin');
    if (req.method === 'OPTIONS') {
      res.writeHead(204, { 'Access-Control-Allow-Methods': 'GET, HEAD, OPTIONS', 'Access-Control-Max-Age': '600' }).end();
      return;
    }
    if (url.pathname.startsWith('/__origin/')) {
      this.handleControl(url.pathname, req, res);
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD, OPTIONS' }).end();
      return;
    }
    if (this.faults.latencyMs) await sleep(this.faults.latencyMs);
    const resolved = this.content.resolve(url.pathname);
    if (!resolved) {
      this.stats.notFound += 1;
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
      return;
    }
    if (resolved.kind === 'segment' && this.faults.errorRate && this.random() < this.faults.errorRate) {
      this.stats.injectedErrors += 1;
      res.writeHead(503, { 'Content-Type': 'text/plain', 'Retry-After': '1' }).end('injected fault');
      return;
    }
    await this.send(req, res, url.pathname, resolved);
  }

  /** Answers a GET or HEAD of a file, whole or the Range asked for. */
  private async send(req: IncomingMessage, res: ServerResponse, path: string, resolved: OriginResource): Promise<void> {
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
    await this.writeBody(res, body.subarray(slice.start, slice.end), this.countRequest(path, resolved));
  }

  /** Counts a request; returns what counts its body's bytes as they are sent. */
  private countRequest(path: string, resolved: OriginResource): (bytes: number) => void {
    const { stats } = this;
    const count = resolved.kind === 'segment' ? stats.segments : resolved.kind === 'subtitle' ? stats.subtitles : stats.playlists;
    count.requests += 1;
    let perPath: (TransferCount & { size: number }) | undefined;
    if (resolved.kind === 'segment') {
      perPath = stats.segmentsByPath[path];
      if (!perPath) {
        perPath = { requests: 0, bytes: 0, size: resolved.body.length };
        stats.segmentsByPath[path] = perPath;
        stats.distinctSegmentBytes += resolved.body.length;
      }
      perPath.requests += 1;
    }
    return (bytes) => {
      count.bytes += bytes;
      if (perPath) perPath.bytes += bytes;
    };
  }

  private async writeBody(res: ServerResponse, body: Buffer, onSent: (bytes: number) => void): Promise<void> {
    const cap = this.faults.bytesPerSecond;
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
  }

  private handleControl(path: string, req: IncomingMessage, res: ServerResponse): void {
    const json = (status: number, value: unknown) =>
      res.writeHead(status, { 'Content-Type': contentTypes.json!, 'Cache-Control': 'no-store' }).end(JSON.stringify(value));
    if (path === '/__origin/stats' && req.method === 'GET') {
      json(200, this.stats);
    } else if (path === '/__origin/reset' && req.method === 'POST') {
      this.resetStats();
      json(200, this.stats);
    } else if (path === '/__origin/faults' && req.method === 'POST') {
      let text = '';
      req.on('data', (chunk: Buffer) => (text += chunk.toString()));
      req.on('end', () => {
        try {
          this.faults = { ...JSON.parse(text || '{}') };
          json(200, this.faults);
        } catch (error) {
          json(400, { error: `faults must be JSON: ${(error as Error).message}` });
        }
      });
    } else {
      json(404, { error: `unknown control path ${path}` });
    }
  }
}

export async function startOrigin(options: OriginOptions = {}): Promise<Origin> {
  const mediaDir = ensureSampleMedia(options.mediaDir ?? defaultMediaDir());
  const content = new OriginContent(mediaDir, options.liveWindowSize ?? 10, options.now ?? Date.now, options.liveEpochMs);
  const handler = new OriginHandler(content, { ...options.faults }, options.random ?? Math.random);
  const server = createServer((req, res) => {
    handler.handle(req, res).catch((error: unknown) => {
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
    stats: () => structuredClone(handler.stats),
    resetStats: () => handler.resetStats(),
    setFaults: (next) => {
      handler.faults = { ...next };
    },
    liveEdgeSequence: () => content.liveEdgeSequence(),
    close: () =>
      new Promise<void>((resolveClose) => {
        server.close(() => resolveClose());
        server.closeAllConnections();
      }),
  };
}
