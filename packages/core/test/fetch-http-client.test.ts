import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FetchHttpClient } from '../src/platform/fetch-http-client.js';
import { realClock } from '../src/platform/real-clock.js';

const file = Uint8Array.from({ length: 300_000 }, (_, i) => (i * 13) & 0xff);
let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((request, response) => {
    const body = Buffer.from(file);
    if (request.url === '/missing') return response.writeHead(404).end();
    if (request.url === '/slow') {
      response.writeHead(200, { 'content-length': body.length });
      response.write(body.subarray(0, 1000));
      return; // never finishes
    }
    const range = /bytes=(\d+)-(\d+)/.exec(request.headers.range ?? '');
    if (range && request.url !== '/no-range') {
      const [start, end] = [Number(range[1]), Number(range[2])];
      response.writeHead(206, { 'content-range': `bytes ${start}-${end}/${body.length}` });
      return response.end(body.subarray(start, end + 1));
    }
    response.writeHead(200).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

describe('FetchHttpClient', () => {
  const client = new FetchHttpClient();

  it('downloads a whole body and reports every chunk', async () => {
    let progress = 0;
    const body = await client.fetch({ url: `${base}/file`, onData: (chunk) => (progress += chunk.length) }).body;
    expect(Buffer.compare(body, file)).toBe(0);
    expect(progress).toBe(file.length);
  });

  it('sends Range requests for half-open ranges', async () => {
    const body = await client.fetch({ url: `${base}/file`, range: { start: 1000, end: 251_000 } }).body;
    expect(Buffer.compare(body, file.subarray(1000, 251_000))).toBe(0);
  });

  it('keeps only the requested bytes when a server ignores Range', async () => {
    let progress = 0;
    const body = await client.fetch({ url: `${base}/no-range`, range: { start: 70_000, end: 70_100 }, onData: (chunk) => (progress += chunk.length) }).body;
    expect(Buffer.compare(body, file.subarray(70_000, 70_100))).toBe(0);
    expect(progress).toBe(100);
  });

  it('rejects with HTTP_STATUS on an error status and ABORTED on abort', async () => {
    await expect(client.fetch({ url: `${base}/missing` }).body).rejects.toMatchObject({ code: 'HTTP_STATUS' });
    const transfer = client.fetch({ url: `${base}/slow` });
    setTimeout(() => transfer.abort(), 50);
    await expect(transfer.body).rejects.toMatchObject({ code: 'ABORTED' });
  });

  it('offers a real clock whose timers can be cleared', async () => {
    let fired = false;
    const timer = realClock.setTimeout(() => (fired = true), 5);
    realClock.clearTimeout(timer);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(fired).toBe(false);
    expect(realClock.now()).toBeGreaterThan(0);
  });
});
