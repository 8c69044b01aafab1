// What operators rely on: the CLI and its config sources, --version, HTTP endpoints and metrics
// (also on a separate listener), limits, X-Forwarded-For hops, allow-lists and TLS certificates
// reloaded on SIGHUP, the drain on SIGTERM, and a clear message when no uWebSockets.js loads
// (the systemd unit: ways-to-run.test.ts).

import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import https from 'node:https';
import tls from 'node:tls';
import WebSocket from 'ws';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { binaryIdToHex } from '../src/protocol.js';
import { clientIp } from '../src/client-ip.js';
import { loadCliOptions, resolveOptions } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { startTracker } from '../src/server.js';
import { WsPeer, binaryId, type Message } from './support/ws-peer.js';
import { startShoal } from './support/trackers.js';

const bin = fileURLToPath(new URL('../bin/shoal-tracker.js', import.meta.url));
const isResponse = (m: Message) => m.action === 'announce' && m.complete !== undefined;
const failure = (m: Message) => typeof m['failure reason'] === 'string';
const announce = (hash: string, peer: string) => ({ action: 'announce', event: 'started', info_hash: hash, peer_id: binaryId(peer), left: 1, offers: [] });

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface CliProcess {
  child: ChildProcess;
  url: string;
  stderr: () => string;
  /** The exit code, or the signal that ended it. */
  exited: Promise<number | string | null>;
}

/** Runs the built CLI (tracker/dist must be built: `npm run build`); resolves once it prints its URL. */
function runCli(args: string[], env: Record<string, string> = {}): Promise<CliProcess> {
  if (!existsSync(fileURLToPath(new URL('../dist/cli.js', import.meta.url)))) {
    throw new Error('tracker/dist is missing: run `node scripts/pnpm.mjs --filter @shoal/tracker build` first');
  }
  const child = spawn(process.execPath, [bin, '--host', '127.0.0.1', '--port', '0', ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<number | string | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  cleanups.push(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk) => {
      stdout += chunk;
      const match = /^listening (wss?:\/\/\S+)$/m.exec(stdout);
      if (match) resolve({ child, url: match[1]!, stderr: () => stderr, exited });
    });
    void exited.then((code) => reject(new Error(`tracker exited with ${code}: ${stderr}`)));
  });
}

const httpUrl = (wsUrl: string, path: string) => wsUrl.replace(/^ws/, 'http') + path;

describe('configuration sources', () => {
  it('gives flags precedence over env, env over the config file, and names a bad field', () => {
    const dir = mkdtempSync(join(tmpdir(), 'shoal-tracker-'));
    const file = join(dir, 'tracker.json');
    writeFileSync(file, JSON.stringify({ port: 7000, maxConnections: 5, fullScrape: true }));
    const { options } = loadCliOptions(['--config', file, '--port', '7002', '--no-full-scrape'], {
      SHOAL_TRACKER_PORT: '7001',
      SHOAL_TRACKER_MAX_CONNECTIONS_PER_IP: '3',
    });
    expect(options).toMatchObject({ port: 7002, maxConnections: 5, maxConnectionsPerIp: 3, fullScrape: false });
    expect(() => loadCliOptions(['--max-connections', 'lots'], {})).toThrow(/`maxConnections` must be a number/);
    expect(() => loadCliOptions(['--bogus'], {})).toThrow(/unknown flag --bogus/);
    writeFileSync(file, JSON.stringify({ prot: 1 }));
    expect(() => loadCliOptions(['--config', file], {})).toThrow(/unknown setting `prot`/);
  });
});

describe('the shoal-tracker CLI', () => {
  it('prints its version, Node and the uWS build that would run', () => {
    const out = execFileSync(process.execPath, [bin, '--version'], { encoding: 'utf8' });
    expect(out).toMatch(/^shoal-tracker \d+\.\d+\.\d+ \(node v\d+\.\d+\.\d+, \S+@\S+ \(uws_[a-z0-9_]+\.node\)\)\n$/);
  });

  it('prints its URL, names the uWS build, serves /health, /stats.json, /metrics and drains on SIGTERM', async () => {
    // A drain long enough that a loaded machine still reaches the late connection inside it.
    const cli = await runCli(['--announce-interval-sec', '30', '--drain-sec', '4']);
    expect(cli.stderr()).toMatch(/"msg":"listening".*"uws":"[^"]+\.node\)"/);
    expect(cli.stderr()).toMatch(/"msg":"open files limit","soft":\d+/);

    const peer = await WsPeer.connect(cli.url);
    peer.send(announce(binaryId('cli-swarm'), 'cli-peer'));
    expect(await peer.next(isResponse)).toMatchObject({ interval: 30, incomplete: 1 });

    const health = await fetch(httpUrl(cli.url, '/health'));
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });

    // With worker threads (the default here) the answering thread gathers its siblings' figures.
    const getStats = async () => (await (await fetch(httpUrl(cli.url, '/stats.json'))).json()) as Record<string, unknown>;
    await expect.poll(getStats, { timeout: 5000 }).toMatchObject({ connections: 1, swarms: 1, peers: 1, leechers: 1 });
    const stats = await getStats();
    expect((stats.memory as { rssBytes: number }).rssBytes).toBeGreaterThan(0);
    expect(stats.uws).toMatch(/uws_/);

    const metrics = await (await fetch(httpUrl(cli.url, '/metrics'))).text();
    expect(metrics).toMatch(/^# TYPE shoal_tracker_connections gauge$/m);
    expect(metrics).toMatch(/^shoal_tracker_peers\{state="leecher"\} 1$/m);
    expect(metrics).toMatch(/^shoal_tracker_requests_total\{kind="announce"\} 1$/m);
    expect(metrics).toMatch(/^process_open_fds \d+$/m);
    expect(metrics).toMatch(/^process_max_fds \d+$/m);
    expect(metrics).toMatch(/^nodejs_eventloop_lag_seconds\{quantile="0.99"\} [\d.e-]+$/m);
    expect(metrics).toMatch(/^shoal_tracker_build_info\{version="\d+\.\d+\.\d+",node="v\d+[^"]*",uws="[^"]+\.node\)"\} 1$/m);
    // One announce handled: it sits in exactly one bucket, the +Inf bucket counts it, and so does _count.
    expect(metrics).toMatch(/^# TYPE shoal_tracker_announce_duration_seconds histogram$/m);
    expect(metrics).toMatch(/^shoal_tracker_announce_duration_seconds_bucket\{le="\+Inf"\} 1$/m);
    expect(metrics).toMatch(/^shoal_tracker_announce_duration_seconds_count 1$/m);
    const buckets = [...metrics.matchAll(/^shoal_tracker_announce_duration_seconds_bucket\{le="([^"]+)"\} (\d+)$/gm)].map((m) => Number(m[2]));
    expect(buckets.length).toBeGreaterThan(5);
    for (let i = 1; i < buckets.length; i++) expect(buckets[i]).toBeGreaterThanOrEqual(buckets[i - 1]!);
    // Every sample line is `name{labels} number`.
    for (const line of metrics.split('\n').filter((l) => l && !l.startsWith('#'))) {
      expect(line).toMatch(/^[a-z_]+(\{[a-z_]+="(?:[^"\\]|\\.)*"(,[a-z_]+="(?:[^"\\]|\\.)*")*\})? -?[\d.e+-]+$/);
    }

    expect((await fetch(httpUrl(cli.url, '/nothing-here'))).status).toBe(404);

    // SIGTERM: /health turns 503 for the drain period while the tracker still serves, then every socket closes.
    cli.child.kill('SIGTERM');
    await expect.poll(async () => (await fetch(httpUrl(cli.url, '/health'))).status, { timeout: 2000, interval: 50 }).toBe(503);
    expect(await (await fetch(httpUrl(cli.url, '/health'))).json()).toEqual({ status: 'draining' });
    const late = await WsPeer.connect(cli.url);
    late.send(announce(binaryId('cli-swarm'), 'late-peer'));
    expect(await late.next(isResponse)).toMatchObject({ incomplete: 2 });
    expect(await peer.closed(10_000)).toBe(1001);
    expect(await late.closed()).toBe(1001);
    // One thread exits 0; with worker threads (the default on a multi-core machine) the process
    // ends by the SIGTERM it was sent once every socket is closed (see cli.ts).
    expect([0, 'SIGTERM']).toContain(await cli.exited);
    expect(cli.stderr()).toMatch(/"msg":"draining","seconds":4/);
  });

  it('reloads the info_hash allow-list on SIGHUP, evicting swarms no longer listed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'shoal-tracker-'));
    const list = join(dir, 'allowed.txt');
    const allowedA = binaryId('allowed-a');
    const allowedB = binaryId('allowed-b');
    writeFileSync(list, `# test list\n${binaryIdToHex(allowedA)}\n`);
    const cli = await runCli(['--info-hash-allow-list', list]);
    const peer = await WsPeer.connect(cli.url);

    peer.send(announce(allowedA, 'p'));
    expect(await peer.next(isResponse)).toMatchObject({ info_hash: allowedA });
    peer.send(announce(allowedB, 'p'));
    expect(await peer.next(failure)).toMatchObject({ 'failure reason': 'info_hash not allowed by this tracker', info_hash: allowedB });

    writeFileSync(list, `${binaryIdToHex(allowedB)}  # only B now\n`);
    cli.child.kill('SIGHUP');
    await expect.poll(() => cli.stderr(), { timeout: 3000 }).toMatch(/allow-list loaded.*"infoHashes":1,"peersEvicted":1/);
    peer.send(announce(allowedB, 'p'));
    expect(await peer.next(isResponse)).toMatchObject({ info_hash: allowedB });

    // A broken edit keeps the previous list and says so.
    writeFileSync(list, 'not a hash\n');
    cli.child.kill('SIGHUP');
    await expect.poll(() => cli.stderr(), { timeout: 3000 }).toMatch(/allow-list reload failed, keeping the previous list.*:1: expected 40 hex digits/);
    const other = await WsPeer.connect(cli.url);
    other.send(announce(allowedB, 'q'));
    expect(await other.next((m) => m.info_hash === allowedB)).toMatchObject({ incomplete: 2 });
    peer.close();
    other.close();
  });

  it('exits with a message naming what to install when no uWebSockets.js build loads', async () => {
    const { startTracker } = await import('../src/index.js');
    await expect(startTracker({ uwsCandidates: ['uWebSockets.js', 'no-such-uws-build'], logLevel: 'silent' })).rejects.toThrow(
      /no uWebSockets.js build loads[\s\S]*uWebSockets.js: [\s\S]*no-such-uws-build: [\s\S]*npm install @trufflesuite\/uws-js-unofficial/,
    );
  });
});

describe('TLS', () => {
  it('serves wss:// and https:// with the given certificate and key', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'shoal-tracker-tls-'));
    const cert = join(dir, 'cert.pem');
    const key = join(dir, 'key.pem');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1'], { stdio: 'ignore' });
    const tracker = await startShoal({ cert, key });
    cleanups.push(() => tracker.close());
    expect(tracker.url).toMatch(/^wss:\/\//);
    const body = await new Promise<string>((resolve, reject) => {
      https.get(httpUrl(tracker.url, '/health'), { rejectUnauthorized: false }, (res) => {
        let text = '';
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve(text));
      }).on('error', reject);
    });
    expect(JSON.parse(body)).toEqual({ status: 'ok' });
    const socket = new WebSocket(tracker.url, { rejectUnauthorized: false });
    const reply = await new Promise<string>((resolve, reject) => {
      socket.once('open', () => socket.send(JSON.stringify(announce(binaryId('tls'), 'tls-peer'))));
      socket.once('message', (data) => resolve(data.toString()));
      socket.once('error', reject);
    });
    expect(JSON.parse(reply)).toMatchObject({ action: 'announce', incomplete: 1 });
    socket.close();
  });
});

describe('limits', () => {
  it('refuses connections over maxConnections and maxConnectionsPerIp, and counts why', async () => {
    const tracker = await startShoal({ maxConnections: 3, maxConnectionsPerIp: 2 });
    cleanups.push(() => tracker.close());
    const a = await WsPeer.connect(tracker.url);
    const b = await WsPeer.connect(tracker.url);
    await expect(WsPeer.connect(tracker.url)).rejects.toThrow(/HTTP 429/);
    a.close();
    await a.closed();
    await expect.poll(() => tracker.stats().connections).toBe(1);
    const c = await WsPeer.connect(tracker.url);
    expect(tracker.stats().rejectedConnections.maxConnectionsPerIp).toBe(1);
    b.close();
    c.close();
  });

  it('allows 256 connections from one address by default, and says in the log why the next is refused', async () => {
    expect(resolveOptions().maxConnectionsPerIp).toBe(256);
    const cli = await runCli(['--workers', '1', '--log-level', 'warn']);
    const sockets = await Promise.all(Array.from({ length: 256 }, () => WsPeer.connect(cli.url)));
    cleanups.push(() => sockets.forEach((socket) => socket.close()));
    await expect(WsPeer.connect(cli.url)).rejects.toThrow(/HTTP 429/);
    await expect.poll(() => cli.stderr(), { timeout: 2000 }).toMatch(/"msg":"connections refused: too many from one address","ip":"127.0.0.1","maxConnectionsPerIp":256,"note":"if this is your proxy or load balancer, set trustProxy/);
  });

  it('refuses a full tracker with 503', async () => {
    const tracker = await startShoal({ maxConnections: 1 });
    cleanups.push(() => tracker.close());
    const a = await WsPeer.connect(tracker.url);
    await expect(WsPeer.connect(tracker.url)).rejects.toThrow(/HTTP 503/);
    expect(tracker.stats().rejectedConnections.maxConnections).toBe(1);
    a.close();
  });

  it('accepts only allowed origins when an origin allow-list is set', async () => {
    const tracker = await startShoal({ allowedOrigins: ['https://video.example'] });
    cleanups.push(() => tracker.close());
    const ok = await WsPeer.connect(tracker.url, { origin: 'https://video.example' });
    await expect(WsPeer.connect(tracker.url, { origin: 'https://evil.example' })).rejects.toThrow(/HTTP 403/);
    await expect(WsPeer.connect(tracker.url)).rejects.toThrow(/HTTP 403/);
    ok.close();
  });

  it('applies the programmatic filter hook to each join, with its reason', async () => {
    const seen: string[] = [];
    const tracker = await startShoal({
      filter: (infoHashHex, { peerIdHex }) => {
        seen.push(`${infoHashHex}/${peerIdHex}`);
        return infoHashHex.startsWith('6f6b') ? true : 'not on our service';
      },
    });
    cleanups.push(() => tracker.close());
    const peer = await WsPeer.connect(tracker.url);
    peer.send(announce(binaryId('ok-swarm'), 'p'));
    expect(await peer.next(isResponse)).toMatchObject({ info_hash: binaryId('ok-swarm') });
    peer.send({ ...announce(binaryId('ok-swarm'), 'p'), event: 'update' });
    await peer.next(isResponse);
    peer.send(announce(binaryId('no-swarm'), 'p'));
    expect(await peer.next(failure)).toMatchObject({ 'failure reason': 'not on our service' });
    // Called on joins only, not on every update.
    expect(seen).toEqual([`${binaryIdToHex(binaryId('ok-swarm'))}/${binaryIdToHex(binaryId('p'))}`, `${binaryIdToHex(binaryId('no-swarm'))}/${binaryIdToHex(binaryId('p'))}`]);
    peer.close();
  });

  it('refuses a join whose filter throws without showing the client the error, which goes to the log', async () => {
    const logged: string[] = [];
    const tracker = await startTracker(
      { host: '127.0.0.1', port: 0, filter: () => { throw new Error('db password=hunter2 at 10.0.0.9'); } },
      { logger: createLogger('error', 'test', (line) => logged.push(line)) },
    );
    cleanups.push(() => tracker.close());
    const peer = await WsPeer.connect(tracker.url);
    peer.send(announce(binaryId('any-swarm'), 'p'));
    expect(await peer.next(failure)).toMatchObject({ 'failure reason': 'announce filter failed' });
    expect(logged.join('\n')).toMatch(/announce filter threw.*hunter2/);
    peer.close();
  });

  it('expires peers that stop announcing while their socket stays open', async () => {
    const tracker = await startShoal({ peerTimeoutSec: 1 });
    cleanups.push(() => tracker.close());
    const peer = await WsPeer.connect(tracker.url);
    peer.send(announce(binaryId('expiring'), 'sleepy'));
    await peer.next(isResponse);
    expect(tracker.stats().peers).toBe(1);
    await expect.poll(() => tracker.stats().peers, { timeout: 8000, interval: 250 }).toBe(0);
    expect(tracker.stats().swarms).toBe(0);
    expect(tracker.stats().totals.peersExpired).toBe(1);
    peer.close();
  });

  it('closes every socket with 1001 and stops listening on close()', async () => {
    const tracker = await startShoal();
    const peer = await WsPeer.connect(tracker.url);
    await tracker.close();
    expect(await peer.closed()).toBe(1001);
    await expect(WsPeer.connect(tracker.url)).rejects.toThrow();
  });
});

describe('client address behind proxies', () => {
  it('trusts only the configured number of X-Forwarded-For hops, counted from the right', () => {
    expect(clientIp('::ffff:10.0.0.1', '6.6.6.6, 203.0.113.7', 0)).toBe('10.0.0.1');
    expect(clientIp('10.0.0.1', '6.6.6.6, 203.0.113.7', 1)).toBe('203.0.113.7');
    expect(clientIp('10.0.0.1', '6.6.6.6, 203.0.113.7, 10.0.0.2', 2)).toBe('203.0.113.7');
    // Fewer entries than hops: the leftmost was still written by one of our proxies.
    expect(clientIp('10.0.0.1', '203.0.113.7', 3)).toBe('203.0.113.7');
    expect(clientIp('10.0.0.1', '', 1)).toBe('10.0.0.1');
    expect(loadCliOptions(['--trust-proxy'], {}).options.trustProxy).toBe(1);
    expect(loadCliOptions(['--trust-proxy', '2'], {}).options.trustProxy).toBe(2);
    expect(loadCliOptions(['--no-trust-proxy'], { SHOAL_TRACKER_TRUST_PROXY: 'true' }).options.trustProxy).toBe(0);
    expect(() => loadCliOptions(['--trust-proxy=-1'], {})).toThrow(/`trustProxy` must be a number of proxy hops/);
  });

  it('limits connections per client address as the trusted proxy saw it, not as the client claims', async () => {
    const tracker = await startShoal({ trustProxy: 1, maxConnectionsPerIp: 1 });
    cleanups.push(() => tracker.close());
    // The same client forging different leftmost entries is still one address.
    const a = await WsPeer.connect(tracker.url, { 'x-forwarded-for': '1.1.1.1, 203.0.113.7' });
    await expect(WsPeer.connect(tracker.url, { 'x-forwarded-for': '2.2.2.2, 203.0.113.7' })).rejects.toThrow(/HTTP 429/);
    const other = await WsPeer.connect(tracker.url, { 'x-forwarded-for': '1.1.1.1, 203.0.113.8' });
    a.close();
    other.close();
  });
});

describe('separate metrics listener', () => {
  it('serves /stats.json and /metrics only on the metrics address, /health on both', async () => {
    const tracker = await startShoal({ metricsHost: '127.0.0.1', metricsPort: 0 });
    cleanups.push(() => tracker.close());
    expect(tracker.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await fetch(`${tracker.metricsUrl}/metrics`)).status).toBe(200);
    expect(await (await fetch(`${tracker.metricsUrl}/stats.json`)).json()).toMatchObject({ connections: 0 });
    expect((await fetch(httpUrl(tracker.url, '/metrics'))).status).toBe(404);
    expect((await fetch(httpUrl(tracker.url, '/stats.json'))).status).toBe(404);
    expect((await fetch(httpUrl(tracker.url, '/health'))).status).toBe(200);
    expect((await fetch(`${tracker.metricsUrl}/health`)).status).toBe(200);
    // A burst of scrapes is served from one snapshot (a second old at most), not a walk of /proc/self/fd each.
    const bodies = await Promise.all(Array.from({ length: 50 }, async () => (await fetch(`${tracker.metricsUrl}/stats.json`)).text()));
    expect(new Set(bodies).size).toBeLessThanOrEqual(2);
    expect(() => loadCliOptions(['--metrics-port', '9100'], {}) && resolveOptions({ metricsPort: 9100 })).toThrow(/`metricsHost` and `metricsPort` go together/);
  });
});

describe('TLS certificate reload', () => {
  const makeCert = (dir: string, name: string) => {
    const cert = join(dir, `${name}-cert.pem`);
    const key = join(dir, `${name}-key.pem`);
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', `/CN=${name}`], { stdio: 'ignore' });
    return { cert, key };
  };
  const servedCommonName = (url: string) =>
    new Promise<string>((resolve, reject) => {
      const socket = tls.connect({ host: '127.0.0.1', port: Number(new URL(url).port), rejectUnauthorized: false }, () => {
        resolve(String(socket.getPeerCertificate().subject.CN));
        socket.end();
      });
      socket.once('error', reject);
    });

  it('serves the new certificate to new connections after SIGHUP, keeps open sockets, and keeps the old one when the new files are broken', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'shoal-tracker-tls-'));
    const first = makeCert(dir, 'first');
    const second = makeCert(dir, 'second');
    const cert = join(dir, 'cert.pem');
    const key = join(dir, 'key.pem');
    copyFileSync(first.cert, cert);
    copyFileSync(first.key, key);
    const cli = await runCli(['--cert', cert, '--key', key]);
    expect(await servedCommonName(cli.url)).toBe('first');
    const open = new WebSocket(cli.url, { rejectUnauthorized: false });
    await new Promise((resolve, reject) => open.once('open', resolve).once('error', reject));

    copyFileSync(second.cert, cert);
    copyFileSync(second.key, key);
    cli.child.kill('SIGHUP');
    await expect.poll(() => cli.stderr(), { timeout: 3000 }).toMatch(/TLS certificate reloaded/);
    expect(await servedCommonName(cli.url)).toBe('second');
    // The socket opened before the reload still works.
    const reply = new Promise<string>((resolve) => open.once('message', (data) => resolve(data.toString())));
    open.send(JSON.stringify(announce(binaryId('tls-reload'), 'old-socket')));
    expect(JSON.parse(await reply)).toMatchObject({ action: 'announce', incomplete: 1 });

    writeFileSync(cert, 'not a certificate\n');
    cli.child.kill('SIGHUP');
    await expect.poll(() => cli.stderr(), { timeout: 3000 }).toMatch(/certificate reload failed, keeping the previous certificate/);
    expect(await servedCommonName(cli.url)).toBe('second');
    open.close();
  });
});
