// One tracker per port: uWS listens with SO_REUSEPORT, so without a check a second tracker (or a
// stale one) starts on a busy port without an error and the kernel splits the swarm between
// the two. The second must refuse, name the port, who holds it and what to do, and exit non-zero,
// while the first keeps serving.

import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { assertSoleListener, claimPorts } from '../src/port-claim.js';
import { freePort, runCliToExit, startCliTracker, stopProcess, type CliTracker } from './support/processes.js';
import { startShoal } from './support/trackers.js';
import { WsPeer, binaryId, type Message } from './support/ws-peer.js';

const isResponse = (m: Message) => m.action === 'announce' && m.complete !== undefined;
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function started(args: string[]): Promise<CliTracker> {
  const tracker = await startCliTracker(args);
  cleanups.push(() => tracker.close());
  return tracker;
}

/** Peers announcing into one swarm on `url`; the last response counts them all if no one else holds the port. */
async function swarmCount(url: string, peers: number): Promise<number> {
  const sockets: WsPeer[] = [];
  let incomplete = 0;
  const swarm = binaryId(`one-port-${Math.random()}`);
  for (let i = 0; i < peers; i++) {
    const peer = await WsPeer.connect(url);
    sockets.push(peer);
    peer.send({ action: 'announce', event: 'started', info_hash: swarm, peer_id: binaryId(`peer-${i}`), left: 1, offers: [] });
    incomplete = Number((await peer.next(isResponse)).incomplete);
  }
  for (const peer of sockets) peer.close();
  return incomplete;
}

describe('a tracker on a port another process holds', () => {
  it('exits 1 naming the port, the holder and what to do, while the first keeps serving one swarm', async () => {
    const first = await started(['--workers', '2']);
    const port = new URL(first.url).port;
    for (const workers of ['1', '2']) {
      const second = await runCliToExit(['--host', '127.0.0.1', '--port', port, '--workers', workers, '--log-level', 'silent']);
      expect(second.exit).toBe(1);
      expect(second.stdout).toBe('');
      expect(second.stderr).toContain(`\`port\`: port ${port} on 127.0.0.1 is already in use by pid ${first.child.pid} (`);
      expect(second.stderr).toContain(`stop it first (kill ${first.child.pid}); or choose another port with --port`);
    }
    // Every connection reaches the first tracker's threads: one swarm holds all six peers.
    expect(await swarmCount(first.url, 6)).toBe(6);
    expect(first.child.exitCode).toBeNull();
  });

  it('starts on the port once the tracker that held it has stopped (a restart)', async () => {
    const first = await startCliTracker(['--drain-sec', '0']);
    const port = new URL(first.url).port;
    first.child.kill('SIGTERM');
    await first.exited;
    const next = await started(['--port', port, '--workers', '1']);
    expect(next.url).toBe(first.url);
    expect(await swarmCount(next.url, 2)).toBe(2);
  });

  it('refuses a wildcard address over a tracker on 127.0.0.1, and a busy metrics port', async () => {
    const metricsPort = String(await freePort());
    const first = await started(['--workers', '1', '--metrics-host', '127.0.0.1', '--metrics-port', metricsPort]);
    const port = new URL(first.url).port;
    const wildcard = await runCliToExit(['--host', '0.0.0.0', '--port', port, '--workers', '1', '--log-level', 'silent']);
    expect(wildcard.exit).toBe(1);
    expect(wildcard.stderr).toContain(`port ${port} on 0.0.0.0 is already in use by pid ${first.child.pid}`);

    const metrics = await runCliToExit(['--host', '127.0.0.1', '--port', '0', '--workers', '1', '--metrics-host', '127.0.0.1', '--metrics-port', metricsPort, '--log-level', 'silent']);
    expect(metrics.exit).toBe(1);
    expect(metrics.stderr).toContain(`\`metricsPort\`: port ${metricsPort} on 127.0.0.1 is already in use by pid ${first.child.pid}`);
    expect(metrics.stderr).toContain('--metrics-port');
  });

  it('of two started at once, exactly one serves, and the other says why', async () => {
    const port = String(await freePort());
    const bin = fileURLToPath(new URL('../bin/shoal-tracker.js', import.meta.url));
    const runs = [0, 1].map(() => {
      const child = spawn(process.execPath, [bin, '--host', '127.0.0.1', '--port', port, '--workers', '2', '--log-level', 'silent'], { stdio: ['ignore', 'pipe', 'pipe'] });
      cleanups.push(() => stopProcess(child, 'SIGINT'));
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk) => (stdout += chunk));
      child.stderr.on('data', (chunk) => (stderr += chunk));
      const settled = new Promise<'serving' | 'exited'>((resolve) => {
        child.stdout.on('data', () => stdout.includes('listening') && resolve('serving'));
        child.once('exit', () => resolve('exited'));
      });
      return { child, settled, stderr: () => stderr };
    });
    const outcomes = await Promise.all(runs.map((run) => run.settled));
    expect(outcomes.sort()).toEqual(['exited', 'serving']);
    const [loser, winner] = runs[0]!.child.exitCode === null ? [runs[1]!, runs[0]!] : [runs[0]!, runs[1]!];
    expect(loser.child.exitCode).toBe(1);
    expect(loser.stderr()).toContain(`port ${port} on 127.0.0.1 is already in use by pid ${winner.child.pid}`);
  });
});

describe('claiming a port (startTracker, port-claim.ts)', () => {
  it('rejects a second tracker in the same process with TRACKER_PORT_IN_USE', async () => {
    const tracker = await startShoal();
    cleanups.push(() => tracker.close());
    const { startTracker } = await import('../src/index.js');
    await expect(startTracker({ host: '127.0.0.1', port: tracker.port, logLevel: 'silent' })).rejects.toMatchObject({
      code: 'TRACKER_PORT_IN_USE',
      message: expect.stringContaining(`port ${tracker.port} on 127.0.0.1 is already in use`),
    });
    expect((await fetch(`http://127.0.0.1:${tracker.port}/health`)).status).toBe(200);
    // Closed, it leaves the port to the next one (a restart).
    await tracker.close();
    const next = await startTracker({ host: '127.0.0.1', port: tracker.port, logLevel: 'silent' });
    cleanups.push(() => next.close());
    expect(await swarmCount(next.url, 1)).toBe(1);
    expect(next.stats().totals.connectionsOpened).toBe(1);
  });

  it('sees another process that got onto the port after the check, and not this process itself', async () => {
    const own = await startShoal();
    cleanups.push(() => own.close());
    expect(() => assertSoleListener([{ setting: 'port', host: '127.0.0.1', port: own.port }])).not.toThrow();
    const other = await started(['--workers', '1']);
    const address = { setting: 'port', host: '127.0.0.1', port: Number(new URL(other.url).port) } as const;
    await expect(claimPorts([address])).rejects.toThrow(`already in use by pid ${other.child.pid}`);
    expect(() => assertSoleListener([address])).toThrow(`already in use by pid ${other.child.pid}`);
  });
});
