// `npm run bench:tracker`: shoal-tracker and bittorrent-tracker's server, one after the other in
// the same conditions: each tracker pinned to core 0, the load generator (a separate Node
// process) pinned to core 1. Modes: fixed-rate (latency at a given load), closed-loop (peak
// throughput; a Node generator saturates before a fast tracker, hence CPU per announce),
// idle (many connected, announced peers: RSS per peer).
//
// Cluster runs (--trackers shoal-workers2,shoal-cluster3): `--workers 2` in one process, and three
// single-thread nodes on a fresh redis-server; all their processes (Redis included) pinned to
// core 0 like a single tracker, so CPU per announce compares, and connections spread over the nodes.
// --spread leaves the trackers' processes unpinned (the kernel places them on either core, the
// generator's included): for latency with nodes and Redis not queueing behind each other on one
// core, which is nearer a node per core than pinning them all to core 0.
//
//   node tracker/bench/run.mjs [--quick] [--spread] [--trackers shoal,reference,shoal-workers2,shoal-cluster3] [--modes rate,closed,idle]
//        [--connections 2000] [--swarms 50] [--offers 5] [--rate 2000] [--duration 10] [--idle-connections 19500]
//        [--json results.json]

import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    spread: { type: 'boolean', default: false },
    trackers: { type: 'string', default: 'shoal,reference' },
    modes: { type: 'string', default: 'rate,closed,idle' },
    connections: { type: 'string', default: '2000' },
    swarms: { type: 'string', default: '50' },
    offers: { type: 'string', default: '5' },
    rate: { type: 'string', default: '2000' },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    'idle-connections': { type: 'string' },
    json: { type: 'string' },
  },
});
const duration = args.duration ?? (args.quick ? '3' : '10');
const warmup = args.warmup ?? (args.quick ? '1' : '3');
const idleConnections = args['idle-connections'] ?? (args.quick ? '2000' : '19500');

const pinned = (core, command) => (process.platform === 'linux' && cpus().length > 1 ? ['taskset', ['-c', String(core), ...command]] : [command[0], command.slice(1)]);

// Rate limit and per-IP limit off: the reference has neither, and the generator is one IP.
const SHOAL = [process.execPath, here('../bin/shoal-tracker.js'), '--host', '127.0.0.1', '--port', '0', '--messages-per-second', '0', '--max-connections-per-ip', '0', '--log-level', 'warn', '--drain-sec', '0'];
const TRACKERS = {
  shoal: {
    label: 'shoal-tracker (uWS)',
    command: [...SHOAL, '--workers', '1'],
  },
  'shoal-workers2': {
    label: 'shoal --workers 2',
    command: [...SHOAL, '--workers', '2'],
  },
  'shoal-cluster3': {
    label: 'shoal 3 nodes + Redis',
    nodes: 3,
    command: [...SHOAL, '--workers', '1'],
  },
  reference: {
    label: 'bittorrent-tracker 11.2.3 (ws)',
    command: [process.execPath, here('./reference-server.mjs'), '0'],
  },
};

function startProcess(name, commandLine, ready) {
  const [command, commandArgs] = args.spread ? [commandLine[0], commandLine.slice(1)] : pinned(0, commandLine);
  const child = spawn(command, commandArgs, { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const match = ready.exec(out);
      if (match) resolve({ child, url: match[1] });
    });
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code}`)));
  });
}

const freePort = () =>
  new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

/** One tracker, or a cluster (redis-server + nodes): { urls, pids, processes }. */
async function startTracker(name) {
  const spec = TRACKERS[name];
  if (!spec.nodes) {
    const tracker = await startProcess(name, spec.command, /listening (ws:\/\/\S+)/);
    return { urls: [tracker.url], pids: [tracker.child.pid], processes: [tracker] };
  }
  const port = await freePort();
  const redis = await startProcess('redis-server', ['redis-server', '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], /(Ready to accept connections)/);
  const nodes = await Promise.all(Array.from({ length: spec.nodes }, () => startProcess(name, [...spec.command, '--redis', `redis://127.0.0.1:${port}`], /listening (ws:\/\/\S+)/)));
  return { urls: nodes.map((node) => node.url), pids: [...nodes, redis].map((p) => p.child.pid), processes: [...nodes, redis] };
}

function runGenerator(urls, pids, mode) {
  const generatorArgs = [
    here('./load-generator.mjs'), '--url', urls.join(','), '--pid', pids.join(','), '--mode', mode,
    '--connections', mode === 'idle' ? idleConnections : args.connections,
    '--swarms', args.swarms, '--offers', args.offers, '--rate', args.rate, '--duration', duration, '--warmup', warmup,
  ];
  const [command, commandArgs] = pinned(1, [process.execPath, ...generatorArgs]);
  const child = spawn(command, commandArgs, { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.once('exit', (code) => {
      try {
        resolve(JSON.parse(out.trim().split('\n').at(-1)));
      } catch {
        reject(new Error(`load generator (${mode}) exited with ${code} and no result`));
      }
    });
  });
}

async function stopTracker(tracker) {
  await Promise.all(tracker.processes.map(stopProcess));
}

async function stopProcess(tracker) {
  tracker.child.removeAllListeners('exit');
  tracker.child.kill('SIGTERM');
  await new Promise((resolve) => {
    const timer = setTimeout(() => {
      tracker.child.kill('SIGKILL');
      resolve();
    }, 5000);
    tracker.child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

const results = {};
const modes = args.modes.split(',');
const trackers = args.trackers.split(',');
console.log(`tracker bench: ${args.connections} connections, ${args.swarms} swarms, ${args.offers} offers/announce (all answered), rate mode ${args.rate}/s, ${duration}s measured after ${warmup}s warm-up; idle ${idleConnections} connections`);
console.log(`machine: ${cpus().length} x ${cpus()[0]?.model}, Node ${process.version}; ${args.spread ? 'trackers unpinned (--spread)' : 'tracker on core 0'}, generator on core 1; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
if (loadavg()[0] > 1) console.log('warning: the machine is already busy; other processes share both cores and the figures will be noisy');
for (const name of trackers) {
  results[name] = {};
  for (const mode of modes) {
    // A fresh tracker per mode, so RSS and CPU figures are not carried over.
    const tracker = await startTracker(name);
    process.stdout.write(`  ${name} ${mode} ... `);
    try {
      results[name][mode] = await runGenerator(tracker.urls, tracker.pids, mode);
      console.log('done');
    } catch (error) {
      results[name][mode] = { error: error.message };
      console.log(error.message);
    }
    await stopTracker(tracker);
  }
}

const pair = (split) => (split ? `${split.p50} / ${split.p99}` : undefined);
const difference = (a, b) => (typeof a === 'number' && typeof b === 'number' ? Math.round((a - b) * 100) / 100 : undefined);
const rows = [
  ['fixed rate: announce responses/s', 'rate', (r) => r.announceResponsesPerSec],
  ['fixed rate: offers relayed/s', 'rate', (r) => r.offersRelayedPerSec],
  ['fixed rate: answers relayed/s', 'rate', (r) => r.answersRelayedPerSec],
  ['fixed rate: announce latency p50 ms', 'rate', (r) => r.latencyMs?.p50],
  ['fixed rate: announce latency p99 ms', 'rate', (r) => r.latencyMs?.p99],
  ['fixed rate: offer relay latency p50 ms', 'rate', (r) => r.offerRelayMs?.p50],
  ['fixed rate: offer relay latency p99 ms', 'rate', (r) => r.offerRelayMs?.p99],
  ['fixed rate: offer relay p50 / p99 ms, target on the same node', 'rate', (r) => pair(r.offerRelaySameNodeMs)],
  ['fixed rate: offer relay p50 / p99 ms, target on another node', 'rate', (r) => pair(r.offerRelayCrossNodeMs)],
  ['fixed rate: p99 a cross-node relay adds (same run) ms', 'rate', (r) => difference(r.offerRelayCrossNodeMs?.p99, r.offerRelaySameNodeMs?.p99)],
  ['fixed rate: tracker CPU µs/announce', 'rate', (r) => r.trackerCpuUsPerAnnounce],
  ['fixed rate: tracker CPU use (cores)', 'rate', (r) => r.trackerCpuUtilization],
  ['fixed rate: load generator CPU use (cores)', 'rate', (r) => r.generatorCpuUtilization],
  ['closed loop: announce responses/s', 'closed', (r) => r.announceResponsesPerSec],
  ['closed loop: offers relayed/s', 'closed', (r) => r.offersRelayedPerSec],
  ['closed loop: answers relayed/s', 'closed', (r) => r.answersRelayedPerSec],
  ['closed loop: announce latency p99 ms', 'closed', (r) => r.latencyMs?.p99],
  ['closed loop: tracker CPU µs/announce', 'closed', (r) => r.trackerCpuUsPerAnnounce],
  ['closed loop: tracker CPU use (cores)', 'closed', (r) => r.trackerCpuUtilization],
  ['idle: peers connected and announced', 'idle', (r) => r.joined],
  ['idle: tracker RSS MB (before -> after)', 'idle', (r) => (r.trackerRssBeforeMB == null ? undefined : `${r.trackerRssBeforeMB} -> ${r.trackerRssAfterMB}`)],
  ['idle: RSS per connected peer KB', 'idle', (r) => r.rssPerPeerKB],
  ['idle: RSS extrapolated to 100k peers MB', 'idle', (r) => r.rssFor100kPeersMB],
];
const header = ['', ...trackers.map((name) => TRACKERS[name].label)];
const table = [header];
for (const [label, mode, pick] of rows) {
  if (!modes.includes(mode)) continue;
  table.push([label, ...trackers.map((name) => {
    const result = results[name][mode];
    if (!result || result.error) return 'error';
    const value = pick(result);
    return value === undefined || value === null ? '-' : String(value);
  })]);
}
if (modes.includes('rate') && trackers.includes('shoal') && trackers.includes('reference')) {
  const ratio = results.shoal.rate?.trackerCpuUsPerAnnounce / results.reference.rate?.trackerCpuUsPerAnnounce;
  if (Number.isFinite(ratio)) table.push(['fixed rate: CPU/announce shoal ÷ reference', `${Math.round(ratio * 100) / 100}`, '']);
}
const widths = header.map((_, column) => Math.max(...table.map((row) => String(row[column] ?? '').length)));
console.log();
for (const row of table) console.log(row.map((cell, column) => String(cell ?? '').padEnd(widths[column])).join('  |  '));
for (const name of trackers) {
  const rate = results[name].rate;
  if (rate && !rate.error && rate.announceResponsesPerSec < 0.95 * Number(args.rate)) {
    console.log(`warning: ${name}: fixed rate reached ${rate.announceResponsesPerSec}/s of ${args.rate}/s: the generator (or the machine) saturated; latency figures are not the tracker's`);
  }
}
console.log(`load average at the end: ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
if (args.json) writeFileSync(args.json, `${JSON.stringify({ date: new Date().toISOString(), args, results }, null, 2)}\n`);
