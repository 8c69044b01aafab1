// coturn (Debian's `turnserver`) as STUN and TURN server for tests and swarms: one long-term user,
// its state in a temp dir, on a free port of the given address.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TurnServer {
  host: string;
  port: number;
  username: string;
  credential: string;
  /** STUN only, and STUN + TURN over UDP with the credentials: RTCConfiguration.iceServers. */
  stunServers(): RTCIceServerLike[];
  turnServers(): RTCIceServerLike[];
  /** What coturn logged so far. */
  output(): string;
  close(): Promise<void>;
}

export interface RTCIceServerLike {
  urls: string;
  username?: string;
  credential?: string;
}

const freePort = (host: string) =>
  new Promise<number>((resolve, reject) => {
    const probe = createServer().listen(0, host, () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
    probe.once('error', reject);
  });

/**
 * Starts coturn on `host` (default 127.0.0.1), relaying from the same address. Peers in
 * `allowedPeerRange` (a test network's range) are let through, and on loopback unless
 * `loopbackPeers` is false.
 */
export async function startTurnServer(options: { host?: string; allowedPeerRange?: string; loopbackPeers?: boolean } = {}): Promise<TurnServer> {
  const host = options.host ?? '127.0.0.1';
  const port = await freePort(host);
  const dir = mkdtempSync(join(tmpdir(), 'shoal-turn-'));
  const [username, credential] = ['viewer', 'turn-secret'];
  let output = '';
  const child: ChildProcess = spawn('turnserver', [
    '-n', `--listening-ip=${host}`, `--listening-port=${port}`, `--relay-ip=${host}`,
    ...(options.loopbackPeers === false ? [] : ['--allow-loopback-peers']),
    ...(options.allowedPeerRange ? [`--allowed-peer-ip=${options.allowedPeerRange}`] : []),
    '--lt-cred-mech', `--user=${username}:${credential}`, '--realm=shoal.test', '--no-tls', '--no-dtls', '--no-cli',
    '--log-file=stdout', '--simple-log', `--pidfile=${join(dir, 'turnserver.pid')}`, `--userdb=${join(dir, 'turndb')}`,
  ], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  try {
    await new Promise<void>((resolve, reject) => {
      child.once('error', (error) => done(() => reject(new Error(`coturn (turnserver) could not start: ${error.message}; Debian: apt-get install -y coturn`))));
      const check = setInterval(() => {
        if (/listener opened on\s*:\s*\S+:\d+/i.test(output) || /Total (UDP|General) servers/i.test(output)) done(resolve);
      }, 50);
      const timer = setTimeout(() => done(() => reject(new Error(`coturn did not start within 10 s:\n${output}`))), 10_000);
      child.once('exit', (code) => done(() => reject(new Error(`coturn exited (code ${code}):\n${output}`))));
      const done = (then: () => void) => {
        clearInterval(check);
        clearTimeout(timer);
        then();
      };
    });
  } catch (error) {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    host,
    port,
    username,
    credential,
    stunServers: () => [{ urls: `stun:${host}:${port}` }],
    turnServers: () => [{ urls: `stun:${host}:${port}` }, { urls: `turn:${host}:${port}?transport=udp`, username, credential }],
    output: () => output,
    close: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) {
          rmSync(dir, { recursive: true, force: true });
          return resolve();
        }
        child.once('exit', () => {
          rmSync(dir, { recursive: true, force: true });
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}
