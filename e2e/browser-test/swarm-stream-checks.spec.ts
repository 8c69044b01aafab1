import { expect, test } from '@playwright/test';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startOrigin } from '../src/origin.js';
import type { SwarmReport } from '../src/swarm/report-schema.js';
import { runTestSwarm } from './swarm-run.js';

// The swarm runner with --stream: the kind of stream read from its playlist, an early stop when
// no viewer starts, and a report a person can read. Real Chromium viewers, real tracker process.

test('a VOD stream given with --stream runs the vod scenario, read from its playlist, and its report\'s labels are readable', async ({ page }) => {
  test.setTimeout(150_000);
  const origin = await startOrigin();
  const lines: string[] = [];
  const outDir = test.info().outputPath('vod-stream');
  try {
    const report = await runTestSwarm({
      name: 'vod-stream',
      streamUrl: `${origin.url}/vod/master.m3u8`,
      peers: 3,
      durationS: 20,
      engines: ['shoal'],
      log: (line) => lines.push(line),
    });
    expect(report.scenario).toBe('vod');
    expect(lines).toContain('the stream is VOD (its media playlist says #EXT-X-PLAYLIST-TYPE:VOD): scenario vod');
  } finally {
    await origin.close();
  }

  // report.html in a laptop-sized window: every label of every chart at 11 px or more, as drawn.
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto(`file://${join(outDir, 'report.html')}`);
  const sizes = await page.evaluate(() =>
    [...document.querySelectorAll('svg')].flatMap((svg) => {
      const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
      return [...svg.querySelectorAll('text')].map((text) => ({ text: text.textContent ?? '', px: Number.parseFloat(getComputedStyle(text).fontSize) * scale }));
    }),
  );
  const viewerLabels = sizes.filter((size) => /^v\d+$/.test(size.text));
  expect(viewerLabels.length).toBeGreaterThanOrEqual(6); // 3 viewers in two charts
  expect(sizes.filter((size) => size.px < 11).map((size) => `${size.text}: ${size.px.toFixed(1)} px`)).toEqual([]);
});

/** A stream every header allows whose segments no player can decode. */
async function startUndecodableStream(): Promise<Server> {
  const segments = Array.from({ length: 10 }, (_, index) => `#EXTINF:2.0,\nseg-${index}.ts`).join('\n');
  const server = createServer((req, res) => {
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Access-Control-Allow-Headers', 'Range');
    res.setHeader('Access-Control-Expose-Headers', 'Content-Length, Content-Range');
    const path = new URL(req.url ?? '/', 'http://stream').pathname;
    if (req.method === 'OPTIONS') res.writeHead(204).end();
    else if (path === '/master.m3u8') res.writeHead(200).end('#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360\nmedia.m3u8\n');
    else if (path === '/media.m3u8') res.writeHead(200).end(`#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXT-X-PLAYLIST-TYPE:VOD\n${segments}\n#EXT-X-ENDLIST\n`);
    else if (path.startsWith('/seg-') && req.headers.range === 'bytes=0-1') res.writeHead(206, { 'Content-Range': 'bytes 0-1/188000' }).end(Buffer.alloc(2, 0x47));
    else if (path.startsWith('/seg-')) res.writeHead(200, { 'Content-Type': 'video/mp2t' }).end(Buffer.alloc(188_000, 0x5a));
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

test('a run in which no viewer starts playing stops early with a partial report and exit 7, and skips the engines after it', async () => {
  test.setTimeout(120_000);
  const server = await startUndecodableStream();
  const outDir = mkdtempSync(join(tmpdir(), 'shoal-no-start-'));
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/master.m3u8`;
    const bin = fileURLToPath(new URL('../bin/swarm.js', import.meta.url));
    // Asynchronous: the stream is served from this process.
    const result = await new Promise<{ status: number; output: string }>((resolve) =>
      execFile(process.execPath, [bin, '--stream', url, '--compare', 'http,shoal', '--peers', '2', '--duration', '60', '--out', outDir], (error, stdout, stderr) =>
        resolve({ status: error ? Number(error.code) : 0, output: `${stdout}${stderr}` }),
      ),
    );
    expect(result.status, result.output).toBe(7);
    expect(result.output).toContain('no viewer started playing within 15 s of the start');
    const report = JSON.parse(readFileSync(join(outDir, 'report.json'), 'utf8')) as SwarmReport;
    expect(report.partial).toMatchObject({ code: 'NO_VIEWER_PLAYING', reason: expect.stringContaining('no viewer started playing') });
    expect(report.runs.map((run) => run.engine)).toEqual(['http']);
    expect(report.runs[0]!.durationS).toBeLessThan(60);
    // The vod scenario spreads the joins over the first third of the run: those that joined, none playing.
    expect(report.runs[0]!.perPeer.length).toBeGreaterThan(0);
    expect(report.runs[0]!.startupMs.notStarted).toBe(report.runs[0]!.perPeer.length);
    expect(readFileSync(join(outDir, 'report.html'), 'utf8')).toContain('PARTIAL: no viewer started playing');
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});
