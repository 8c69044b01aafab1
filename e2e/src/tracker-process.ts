// Starts Shoal's tracker as its own process through its CLI, exactly as an operator runs it.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface TrackerProcess {
  /** ws://host:port */
  url: string;
  /** http://host:port, for /stats.json, /metrics, /health. */
  httpUrl: string;
  process: ChildProcess;
  close(): Promise<void>;
}

const cliPath = fileURLToPath(new URL('../../tracker/bin/shoal-tracker.js', import.meta.url));

/** `cli`: another install's shoal-tracker.js (the consumer test runs the one npm installed from the tarball). */
export async function startTrackerProcess(options: { host?: string; port?: number; args?: string[]; cli?: string } = {}): Promise<TrackerProcess> {
  const host = options.host ?? '127.0.0.1';
  // No drain period on SIGTERM: nothing balances load in front of a test's tracker; and every
  // browser of a swarm on this machine comes from the same address.
  const child = spawn(process.execPath, [options.cli ?? cliPath, '--host', host, '--port', String(options.port ?? 0), '--drain-sec', '0', '--max-connections-per-ip', '0', ...(options.args ?? [])], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`the tracker did not start within 15 s:\n${output}`)), 15_000);
    const fail = (error: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening (ws:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => fail(new Error(`the tracker exited (code ${code}) before listening:\n${output}`)));
  });
  child.removeAllListeners('exit');
  return {
    url,
    httpUrl: url.replace(/^ws/, 'http'),
    process: child,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        child.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}
