// The packed tarball, installed as users install it. SIGHUP through every documented way of
// running the tracker: the repository's bin, a local npm install (node_modules/.bin), npx against
// that install, a global install (npm install -g --prefix), and the systemd unit pointed at the
// global install. Where signals reach the tracker it reloads; npx forwards only SIGINT and
// SIGTERM, so there a SIGHUP ends npm and the tracker must not outlive it: it drains, exits and
// frees its port. And the swarm logic's own entry point, `@shoal/tracker/swarm-registry`.

import { execFile, execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, constants, copyFileSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { binaryIdToHex } from '../src/protocol.js';
import { WsPeer, binaryId, type Message } from './support/ws-peer.js';

const trackerDir = fileURLToPath(new URL('..', import.meta.url));
const repositoryBin = join(trackerDir, 'bin', 'shoal-tracker.js');
const execFileAsync = promisify(execFile);
const allowedA = binaryId('ways-a');
const allowedB = binaryId('ways-b');

let work = '';
let project = '';
let prefix = '';
let list = '';
// npm's own variables would tell a tracker it runs under npm; the ways below say that themselves.
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('npm_')));
const npm = async (args: string[], cwd: string) => (await execFileAsync('npm', [...args, '--no-audit', '--no-fund', '--prefer-offline'], { cwd, env, encoding: 'utf8' })).stdout;

beforeAll(async () => {
  work = realpathSync(mkdtempSync(join(tmpdir(), 'shoal-tracker-ways-')));
  // The tests run on the built dist (as the CLI tests do); packing skips the prepack build.
  const tarball = join(work, (await npm(['pack', '--ignore-scripts', '--pack-destination', work], trackerDir)).trim().split('\n').pop()!);
  project = join(work, 'project');
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), '{ "name": "ways-to-run", "private": true }\n');
  prefix = join(work, 'global');
  await Promise.all([npm(['install', tarball], project), npm(['install', '-g', '--prefix', prefix, tarball], work)]);
  list = join(work, 'allowed.txt');
}, 120_000);
// Two installs hold both uWS packages: some 450 MB.
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface Running {
  child: ChildProcess;
  url: string;
  output(): string;
  /** Resolves when no process holds the child's stdout and stderr any longer (npm, its shell, the tracker). */
  pipesClosed: Promise<void>;
}
const running: Running[] = [];
afterEach(() => {
  // Each way runs in its own process group: whatever npm left behind goes with it.
  for (const run of running.splice(0)) {
    try {
      process.kill(-run.child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

function start(command: string, args: string[], cwd: string): Promise<Running> {
  writeFileSync(list, `${binaryIdToHex(allowedA)}\n`);
  const trackerArgs = ['--host', '127.0.0.1', '--port', '0', '--log-level', 'info', '--drain-sec', '0', '--info-hash-allow-list', list];
  const child = spawn(command, [...args, ...trackerArgs], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const closed = (stream: NodeJS.ReadableStream) => new Promise<void>((resolve) => stream.once('close', () => resolve()));
  const pipesClosed = Promise.all([closed(child.stdout!), closed(child.stderr!)]).then(() => undefined);
  return new Promise((resolve, reject) => {
    const poll = setInterval(() => {
      const match = /^listening (ws:\/\/\S+)$/m.exec(output);
      if (!match) return;
      clearInterval(poll);
      const run = { child, url: match[1]!, output: () => output, pipesClosed };
      running.push(run);
      resolve(run);
    }, 20);
    void pipesClosed.then(() => {
      clearInterval(poll);
      reject(new Error(`${command} ended before listening: ${output}`));
    });
  });
}

const isResponse = (m: Message) => m.action === 'announce' && (m.complete !== undefined || m['failure reason'] !== undefined);

/** Whether the tracker lets a peer join swarm B, which only the edited allow-list names. */
async function allowsB(url: string): Promise<boolean> {
  const peer = await WsPeer.connect(url);
  peer.send({ action: 'announce', event: 'started', info_hash: allowedB, peer_id: binaryId(`p-${Math.random()}`), left: 1, offers: [] });
  const reply = await peer.next(isResponse);
  peer.close();
  return reply['failure reason'] === undefined;
}

/** Edits the allow-list, sends SIGHUP to `pid`, and waits until the tracker applies the new list. */
async function reloadsOnSighup(url: string, pid: number): Promise<void> {
  expect(await allowsB(url)).toBe(false);
  writeFileSync(list, `${binaryIdToHex(allowedB)}\n`);
  process.kill(pid, 'SIGHUP');
  await expect.poll(() => allowsB(url), { timeout: 5000, interval: 100 }).toBe(true);
}

function portIsFree(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ host: '127.0.0.1', port: Number(new URL(url).port), exclusive: true }, () => server.close(() => resolve(true)));
  });
}

async function stopsOnSigterm(run: Running): Promise<void> {
  process.kill(run.child.pid!, 'SIGTERM');
  await run.pipesClosed;
  expect(await portIsFree(run.url)).toBe(true);
}

describe('SIGHUP reloads the tracker', () => {
  it('run from the repository: node tracker/bin/shoal-tracker.js (threads)', async () => {
    const run = await start(process.execPath, [repositoryBin, '--workers', '2'], trackerDir);
    await reloadsOnSighup(run.url, run.child.pid!);
    await stopsOnSigterm(run);
  });

  it('installed locally: ./node_modules/.bin/shoal-tracker', async () => {
    const run = await start('./node_modules/.bin/shoal-tracker', ['--workers', '1'], project);
    await reloadsOnSighup(run.url, run.child.pid!);
    await stopsOnSigterm(run);
  });

  it('installed globally: $(npm prefix -g)/bin/shoal-tracker (threads)', async () => {
    const run = await start(join(prefix, 'bin', 'shoal-tracker'), ['--workers', '2'], work);
    await reloadsOnSighup(run.url, run.child.pid!);
    await stopsOnSigterm(run);
  });

  it('under npx: sent to the pid the tracker logs at start', async () => {
    const run = await start('npx', ['shoal-tracker', '--workers', '1'], project);
    const started = /"msg":"started by npm","npmPid":(\d+),"pid":(\d+)/.exec(run.output());
    expect(started, run.output()).not.toBeNull();
    expect(Number(started![1])).toBe(run.child.pid);
    await reloadsOnSighup(run.url, Number(started![2]));
    // SIGTERM to npx is forwarded: the tracker drains and exits, and npm with it.
    await stopsOnSigterm(run);
  });
});

describe('a wrapper that does not forward SIGHUP', () => {
  it('npx: SIGHUP ends npm, and the tracker drains, exits and frees its port', async () => {
    const run = await start('npx', ['shoal-tracker', '--workers', '2'], project);
    const trackerPid = Number(/"msg":"started by npm","npmPid":\d+,"pid":(\d+)/.exec(run.output())![1]);
    process.kill(run.child.pid!, 'SIGHUP');
    await run.pipesClosed;
    expect(run.output()).toMatch(/"msg":"npm, which started this tracker, is gone: draining, then exiting"/);
    expect(() => process.kill(trackerPid, 0)).toThrow(/ESRCH/);
    expect(await portIsFree(run.url)).toBe(true);
  });
});

describe('the systemd unit', () => {
  it('points at the global install once its path is adapted as the README says, and passes systemd-analyze verify', (context) => {
    if (spawnSync('systemd-analyze', ['--version']).status !== 0) return context.skip();
    const unit = join(prefix, 'lib', 'node_modules', '@shoal', 'tracker', 'deploy', 'shoal-tracker.service');
    const copy = join(work, 'shoal-tracker.service');
    copyFileSync(unit, copy);
    // The README's line, with this prefix for `$(npm prefix -g)`.
    execFileSync('sed', ['-i', `s|/usr/local/bin/shoal-tracker|${prefix}/bin/shoal-tracker|`, copy]);
    const execStart = /^ExecStart=(\S+) --config \/etc\/shoal\/tracker\.json$/m.exec(readFileSync(copy, 'utf8'));
    expect(execStart?.[1]).toBe(join(prefix, 'bin', 'shoal-tracker'));
    accessSync(execStart![1]!, constants.X_OK);
    const result = spawnSync('systemd-analyze', ['verify', '--man=no', copy], { encoding: 'utf8' });
    expect(`${result.stdout}${result.stderr}`.trim(), 'systemd-analyze verify output').toBe('');
    expect(result.status).toBe(0);
    expect(readFileSync(copy, 'utf8')).toMatch(/^ExecReload=\/bin\/kill -HUP \$MAINPID$/m);
  });
});

describe('@shoal/tracker/swarm-registry', () => {
  it('imports on its own, typed, without the server (no uWS, no sockets)', async () => {
    writeFileSync(
      join(project, 'swarms.mts'),
      [
        "import { SwarmRegistry, type PeerEntry } from '@shoal/tracker/swarm-registry';",
        'const registry = new SwarmRegistry<string>({ random: () => 0 });',
        "const { swarm, peer } = registry.announce({ infoHash: 'h', peerId: 'a', owner: 'socket-a', event: 'started', left: 1, nowMs: 0 });",
        "registry.announce({ infoHash: 'h', peerId: 'b', owner: 'socket-b', event: 'started', left: 0, nowMs: 0 });",
        'const sampled: PeerEntry<string>[] = registry.samplePeers(swarm, 5, peer);',
        'export const result = { counts: registry.counts(), sampled: sampled.map((entry) => entry.owner) };',
        '',
      ].join('\n'),
    );
    // A consumer's strict Node16+ resolution, and nothing else to compile (no DOM, no @types).
    const compilerOptions = { strict: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', lib: ['es2022'], types: [], outDir: 'out' };
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['swarms.mts'] }));
    const tsc = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url));
    await execFileAsync(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: project });
    const print = "import('./out/swarms.mjs').then((module) => console.log(JSON.stringify(module.result)))";
    const { stdout } = await execFileAsync(process.execPath, ['-e', print], { cwd: project });
    expect(JSON.parse(stdout)).toEqual({ counts: { swarms: 1, peers: 2, seeders: 1, leechers: 1 }, sampled: ['socket-b'] });
    const entry = readFileSync(join(project, 'node_modules', '@shoal', 'tracker', 'dist', 'swarm-registry.js'), 'utf8');
    expect(entry).not.toMatch(/^\s*import\b/m);
  });
});
