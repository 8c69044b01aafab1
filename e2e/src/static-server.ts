// A small static file server for the example pages and the built bundles.
import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, sep } from 'node:path';

const contentTypes: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.m3u8': 'application/vnd.apple.mpegurl',
  '.ts': 'video/mp2t',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
};

export interface StaticServerOptions {
  host?: string;
  port?: number;
  /** URL prefix (ending in '/') → directory. The longest matching prefix wins. */
  mounts: Record<string, string>;
  /** Served as /config.json: how pages find the origin and the tracker. */
  config?: unknown;
}

export interface StaticServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

export async function startStaticServer(options: StaticServerOptions): Promise<StaticServer> {
  const prefixes = Object.keys(options.mounts).sort((a, b) => b.length - a.length);
  const server = createServer(async (req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://static').pathname);
    if (path === '/config.json' && options.config !== undefined) {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' }).end(JSON.stringify(options.config));
      return;
    }
    const prefix = prefixes.find((candidate) => path.startsWith(candidate));
    if (!prefix) {
      res.writeHead(404).end('not found');
      return;
    }
    const root = options.mounts[prefix]!;
    let file = normalize(join(root, path.slice(prefix.length)));
    if (file !== root && !file.startsWith(root.endsWith(sep) ? root : root + sep)) {
      res.writeHead(403).end('forbidden');
      return;
    }
    try {
      if ((await stat(file)).isDirectory()) file = join(file, 'index.html');
      const body = await readFile(file);
      res.writeHead(200, {
        'Content-Type': contentTypes[extname(file)] ?? 'application/octet-stream',
        'Cache-Control': 'no-cache',
      });
      res.end(body);
    } catch {
      res.writeHead(404).end('not found');
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host ?? '127.0.0.1'}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
