// Real processes for cluster tests: redis-server (Debian's package) and the built tracker CLI,
// each on a free loopback port, stopped by the returned close().

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { TestTracker } from './trackers.js';

const bin = fileURLToPath(new URL('../../bin/shoal-tracker.js', import.meta.url));

// Whatever a test started goes when the test process does, even when a hook timed out before
// the test could hold (and close) what it was starting.
const started = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});
function track(child: ChildProcess): ChildProcess {
  started.add(child);
  child.once('exit', () => started.delete(child));
  return child;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface RedisProcess {
  url: string;
  port: number;
  child: ChildProcess;
  close(): Promise<void>;
}

/** A throw-away redis-server: no persistence, loopback only. */
export async function startRedis(port?: number, extraArgs: string[] = []): Promise<RedisProcess> {
  const chosen = port ?? (await freePort());
  const child = track(spawn('redis-server', ['--port', String(chosen), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...extraArgs], { stdio: ['ignore', 'pipe', 'pipe'] }));
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  await new Promise<void>((resolve, reject) => {
    child.once('error', (error) => reject(new Error(`cannot start redis-server (apt-get install redis-server): ${error.message}`)));
    child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${output}`)));
    const poll = setInterval(() => {
      if (/Ready to accept connections/.test(output)) {
        clearInterval(poll);
        resolve();
      }
    }, 20);
  });
  return {
    url: `redis://127.0.0.1:${chosen}`,
    port: chosen,
    child,
    close: () => stopProcess(child, 'SIGTERM'),
  };
}

export interface CliTracker extends TestTracker {
  child: ChildProcess;
  stderr(): string;
  exited: Promise<number | null>;
}

/** The built CLI (`tracker/dist`), resolved once it prints its URL. */
export function startCliTracker(args: string[], env: Record<string, string> = {}): Promise<CliTracker> {
  if (!existsSync(fileURLToPath(new URL('../../dist/cli.js', import.meta.url)))) {
    throw new Error('tracker/dist is missing: run `node scripts/pnpm.mjs --filter @shoal/tracker build` first');
  }
  const child = track(
    spawn(process.execPath, [bin, '--host', '127.0.0.1', '--port', '0', '--log-level', 'warn', ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let stderr = '';
  let stdout = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk) => {
      stdout += chunk;
      const match = /^listening (wss?:\/\/\S+)$/m.exec(stdout);
      if (match) {
        resolve({ name: `shoal ${args.join(' ')}`, url: match[1]!, child, stderr: () => stderr, exited, close: () => stopProcess(child, 'SIGINT') });
      }
    });
    void exited.then((code) => reject(new Error(`tracker exited with ${code}: ${stderr}`)));
  });
}

export interface FinishedProcess {
  /** The exit code, or the signal that ended it. */
  exit: number | string | null;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI with exactly these arguments until it exits; rejects if it still runs after `timeoutMs`. */
export function runCliToExit(args: string[], timeoutMs = 10_000): Promise<FinishedProcess> {
  const child = track(spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'pipe', 'pipe'] }));
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`shoal-tracker ${args.join(' ')} still runs after ${timeoutMs} ms; stdout: ${stdout}`));
    }, timeoutMs);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ exit: code ?? signal, stdout, stderr });
    });
  });
}

export function stopProcess(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill(signal);
  });
}

export interface TrackerCluster extends TestTracker {
  redis: RedisProcess;
  nodes: CliTracker[];
  /** The nodes' URLs; a test connects its peers to them in turn. */
  urls: string[];
}

/** `count` tracker nodes sharing one fresh redis-server. */
export async function startCluster(count: number, args: string[] = []): Promise<TrackerCluster> {
  const redis = await startRedis();
  const nodes = await Promise.all(Array.from({ length: count }, () => startCliTracker(['--workers', '1', '--redis', redis.url, ...args])));
  return {
    name: `cluster of ${count} on Redis`,
    url: nodes[0]!.url,
    urls: nodes.map((node) => node.url),
    redis,
    nodes,
    close: async () => {
      await Promise.all(nodes.map((node) => node.close()));
      await redis.close();
    },
  };
}
