#!/usr/bin/env node
// A flash crowd of real tracker clients in Chromium, through the message tap, to measure what
// honest clients send per connection: residents join a swarm, then newcomers arrive all at once
// and their offers (5 per announce) reach the residents, who must answer them. Each client has
// its own socket, as each viewer's browser would. Clients do signaling only (no video):
//
// - bittorrent-tracker: its real Client (as WebTorrent and p2p-media-loader use it), which
//   answers every offer it gets;
// - shoal: @shoal/core's WebRTC signaling, asked for peers every 5 s while it has fewer than 6,
//   as the engine does.
//
// Run inside a loopback-only network namespace (WebRTC between pages on one machine):
//   node scripts/netns.mjs node tracker/bench/signaling-crowd.mjs --client bittorrent-tracker \
//        [--residents 10] [--newcomers 40] [--within-ms 1000] [--settle-s 20] [--pages 4] [--out crowd.json]
// Needs the built tracker and packages (npm run setup).

import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { chromium } from '@playwright/test';
import { build } from 'esbuild';
import { chromiumLaunchOptions } from '../../e2e/dist/chromium.js';
import { formatSummary, startTap, summarize } from './message-tap.mjs';

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const { values: args } = parseArgs({
  options: {
    client: { type: 'string', default: 'bittorrent-tracker' },
    residents: { type: 'string', default: '10' },
    newcomers: { type: 'string', default: '40' },
    'within-ms': { type: 'string', default: '1000' },
    'settle-s': { type: 'string', default: '20' },
    pages: { type: 'string', default: '4' },
    'tracker-args': { type: 'string', default: '' },
    out: { type: 'string' },
  },
});
const kind = args.client;
if (kind !== 'bittorrent-tracker' && kind !== 'shoal') {
  console.error('--client must be bittorrent-tracker or shoal');
  process.exit(2);
}
const residents = Number(args.residents);
const newcomers = Number(args.newcomers);
const withinMs = Number(args['within-ms']);
const settleS = Number(args['settle-s']);
const pageCount = Math.max(1, Number(args.pages));

/** One browser script that defines window.startCrowdClient(i, url, infoHashHex). */
async function bundle() {
  const source =
    kind === 'bittorrent-tracker'
      ? `import Client from 'bittorrent-tracker/client';
         window.crowd = { connected: 0, warnings: [] };
         window.startCrowdClient = (i, url, infoHash) => {
           const peerId = Array.from(new TextEncoder().encode(('-WW0001-' + i).padEnd(20, '.'))).map((b) => b.toString(16).padStart(2, '0')).join('');
           // A distinct URL per client: the library shares one socket per URL within a page.
           const client = new Client({ infoHash, peerId, announce: [url + '/c' + i], port: 6881 });
           client.on('warning', (e) => window.crowd.warnings.push(String(e && e.message)));
           client.on('error', (e) => window.crowd.warnings.push('error: ' + String(e && e.message)));
           client.on('peer', (peer) => { peer.on('connect', () => window.crowd.connected++); peer.on('error', () => {}); });
           client.start();
         };`
      : `import { createWebRtcSignaling } from '@shoal/core/webrtc';
         window.crowd = { connected: 0, warnings: [] };
         window.startCrowdClient = (i, url, infoHash) => {
           const signaling = createWebRtcSignaling({ trackers: [url], iceServers: [] });
           let peers = 0;
           const swarm = signaling.join(infoHash, {
             peer: (transport) => {
               peers++;
               window.crowd.connected++;
               transport.setEvents({ message() {}, drain() {}, close() { peers--; } });
             },
             error: (e) => window.crowd.warnings.push('error: ' + e.message),
             warning: (m) => window.crowd.warnings.push(m),
           });
           // The engine's rhythm: ask for peers every 5 s while below its target of 6.
           setInterval(() => { if (peers < 6) swarm.requestPeers(); }, 5000);
         };`;
  const result = await build({
    stdin: { contents: source, resolveDir: kind === 'bittorrent-tracker' ? here('..') : here('../../e2e') },
    bundle: true,
    platform: 'browser',
    format: 'iife',
    write: false,
    nodePaths: [here('../node_modules')],
    define: { global: 'globalThis', 'process.browser': 'true' },
    logLevel: 'silent',
  });
  return result.outputFiles[0].text;
}

function startTrackerProcess(extraArgs) {
  const child = spawn(process.execPath, [here('../bin/shoal-tracker.js'), '--host', '127.0.0.1', '--port', '0', '--log-level', 'warn', '--max-connections-per-ip', '0', ...extraArgs], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
      const match = /listening (ws:\/\/\S+)/.exec(output);
      if (match) resolve({ url: match[1], child });
    });
    child.once('exit', (code) => reject(new Error(`tracker exited (${code}): ${output}`)));
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const trackerArgs = args['tracker-args'].split(' ').filter(Boolean);
const tracker = await startTrackerProcess(trackerArgs);
const tap = await startTap({ target: tracker.url });
const script = await bundle();
const browser = await chromium.launch(chromiumLaunchOptions());
const pages = [];
for (let i = 0; i < pageCount; i++) {
  const context = await browser.newContext({ permissions: ['camera', 'microphone'] });
  const page = await context.newPage();
  await page.setContent('<!doctype html><title>crowd</title>');
  await page.addScriptTag({ content: script });
  pages.push(page);
}
const infoHash = Buffer.from('signaling crowd.....').toString('hex');
const start = (i) => pages[i % pages.length].evaluate(([n, url, hash]) => window.startCrowdClient(n, url, hash), [i, tap.url, infoHash]);

const startedAt = Date.now();
console.log(`${kind}: ${residents} residents, then ${newcomers} newcomers within ${withinMs} ms; tracker ${trackerArgs.join(' ') || '(defaults)'}`);
for (let i = 0; i < residents; i++) {
  await start(i);
  await sleep(200);
}
await sleep(5000);
const crowdAt = Date.now();
await Promise.all(Array.from({ length: newcomers }, (_, n) => sleep((withinMs * n) / Math.max(1, newcomers)).then(() => start(residents + n))));
await sleep(settleS * 1000);

const crowdStats = await Promise.all(pages.map((page) => page.evaluate(() => window.crowd)));
const stats = await (await fetch(`${tracker.url.replace(/^ws/, 'http')}/stats.json`)).json();
const summary = summarize(tap.connections);
const report = {
  command: `node tracker/bench/signaling-crowd.mjs ${process.argv.slice(2).join(' ')}`,
  date: new Date().toISOString(),
  client: kind,
  residents,
  newcomers,
  withinMs,
  crowdStartS: (crowdAt - startedAt) / 1000,
  connected: crowdStats.reduce((sum, s) => sum + s.connected, 0),
  warnings: crowdStats.flatMap((s) => s.warnings).slice(0, 20),
  tracker: { rateLimited: stats.totals.rateLimited, failures: stats.totals.failures, offersRelayed: stats.totals.offersRelayed, answersRelayed: stats.totals.answersRelayed },
  ...summary,
};
console.log(formatSummary(summary));
console.log(`data channels opened: ${report.connected}; tracker: ${JSON.stringify(report.tracker)}`);
if (report.warnings.length) console.log(`warnings (first ${report.warnings.length}): ${[...new Set(report.warnings)].join(' | ')}`);
if (args.out) writeFileSync(args.out, `${JSON.stringify(report, null, 2)}\n`);
await browser.close();
await tap.close();
tracker.child.kill('SIGTERM');
