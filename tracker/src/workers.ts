// `--workers N`: N threads serve one port. Each thread is a whole tracker (uWS app, message
// handler, registry) listening on the same port with SO_REUSEPORT, so the kernel spreads connections
// over them; the threads form a cluster over a ThreadBus (see cluster-membership.ts), which
// relays an announce's offers to peers whose sockets another thread holds. This main thread
// claims the ports for the process (no other process may listen on them), then only starts,
// signals and, if one dies, restarts the threads.

import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { ConfigError, resolveOptions, type TrackerOptions } from './config.js';
import { findFreePort } from './free-port.js';
import { createLogger, type Logger } from './logger.js';
import { assertSoleListener, claimPorts, type PortAddress } from './port-claim.js';
import { ThreadBus } from './thread-bus.js';
import { checkTlsFiles } from './tls-files.js';

export interface RunningWorkers {
  readonly port: number;
  readonly url: string;
  readonly uwsBuild: string;
  readonly threads: number;
  readonly metricsUrl: string | null;
  /** Every thread reloads its allow-list and TLS certificate (SIGHUP). */
  reload(): void;
  /** Every thread drains (/health 503 for drainSec), then closes. */
  drain(): Promise<void>;
  close(): Promise<void>;
}

/** What the main thread sends a worker. */
export type WorkerCommand = { kind: 'reload' } | { kind: 'drain' } | { kind: 'close' };
/** What a worker sends back. */
export type WorkerReport =
  | { kind: 'listening'; url: string; uwsBuild: string; metricsUrl: string | null }
  | { kind: 'closed' }
  | { kind: 'failed'; message: string };
type Listening = Extract<WorkerReport, { kind: 'listening' }>;

export interface WorkerData {
  options: Partial<TrackerOptions>;
  namespace: string;
  index: number;
  threads: number;
}

/** The threads of one process, each started, told and (when it dies while serving) restarted here. */
class ThreadSet {
  private readonly workers: (Worker | null)[];
  private closing = false;
  private readonly closedWaiters = new Set<() => void>();
  /** Threads that closed their sockets. They are not left to exit on their own: uWS builds do not all free their loop, so a thread ending crashes Node (SIGSEGV/abort) instead of exiting; the process ends them all at once when it exits. */
  private readonly closedThreads = new Set<number>();
  private readonly namespace = `${process.pid}-${Math.random().toString(36).slice(2, 8)}`;

  constructor(
    private readonly threads: number,
    private readonly threadOptions: Partial<TrackerOptions>,
    private readonly logger: Logger,
  ) {
    this.workers = new Array<Worker | null>(threads).fill(null);
  }

  /** Starts every thread; resolves with the first one's report once all listen. */
  async start(): Promise<Listening> {
    try {
      const reports = await Promise.all(Array.from({ length: this.threads }, (_, index) => this.spawn(index)));
      return reports[0]!;
    } catch (error) {
      await this.terminate();
      throw error;
    }
  }

  /** Ends every thread at once, without a drain (a start that failed). */
  private async terminate(): Promise<void> {
    this.closing = true;
    await Promise.all(this.workers.map((worker) => worker?.terminate()));
  }

  send(command: WorkerCommand): void {
    for (const worker of this.workers) worker?.postMessage(command);
  }

  /** Tells every thread to drain or close; resolves once every one has closed its sockets. */
  stop(command: WorkerCommand): Promise<void> {
    this.closing = true;
    const done = new Promise<void>((resolve) => {
      if (this.closedThreads.size === this.threads) return resolve();
      this.closedWaiters.add(resolve);
    });
    this.send(command);
    return done;
  }

  private threadClosed(index: number): void {
    this.closedThreads.add(index);
    if (this.closedThreads.size === this.threads) for (const done of this.closedWaiters) done();
  }

  private spawn(index: number): Promise<Listening> {
    return new Promise((resolve, reject) => {
      const workerData: WorkerData = { options: this.threadOptions, namespace: this.namespace, index, threads: this.threads };
      const worker = new Worker(new URL('./worker-entry.js', import.meta.url), { workerData });
      this.workers[index] = worker;
      let listening = false;
      worker.on('message', (report: WorkerReport) => {
        if (report.kind === 'listening') {
          listening = true;
          resolve(report);
        } else if (report.kind === 'closed') {
          this.threadClosed(index);
        } else if (report.kind === 'failed') {
          reject(new Error(report.message));
        }
      });
      worker.on('error', (error) => {
        if (!listening) reject(error);
        else this.logger.error('worker thread failed', { thread: index, error: error instanceof Error ? error.stack ?? error.message : JSON.stringify(error) });
      });
      worker.on('exit', (code) => this.exited(index, code, listening));
    });
  }

  private exited(index: number, code: number, wasListening: boolean): void {
    this.workers[index] = null;
    // Its peers are gone with its sockets: the other threads must forget them now.
    ThreadBus.announceLost(this.namespace, threadNodeId(this.namespace, index));
    if (this.closing) return this.threadClosed(index);
    if (!wasListening) return;
    this.logger.error('worker thread exited; starting another', { thread: index, code });
    setTimeout(() => {
      if (!this.closing) this.spawn(index).catch((error: unknown) => this.logger.error('worker thread restart failed', { thread: index, error: String(error) }));
    }, 1000).unref();
  }
}

export async function startWorkers(partial: Partial<TrackerOptions>, dependencies: { logger?: Logger } = {}): Promise<RunningWorkers> {
  const options = resolveOptions(partial);
  const logger = dependencies.logger ?? createLogger(options.logLevel);
  if (options.filter) throw new ConfigError('options: `filter` cannot cross into worker threads; use `workers: 1` with a filter');
  const threads = options.workers === 0 ? availableParallelism() : options.workers;
  if (options.cert && options.key) checkTlsFiles(options.cert, options.key);
  // Every thread must listen on the same numbered port (see free-port.ts).
  const port = options.port === 0 ? await findFreePort(options.host) : options.port;
  const metricsPort = options.metricsHost !== null && options.metricsPort === 0 ? await findFreePort(options.metricsHost) : options.metricsPort;
  const addresses: PortAddress[] = [{ setting: 'port', host: options.host, port }];
  if (options.metricsHost !== null && metricsPort !== null) addresses.push({ setting: 'metricsPort', host: options.metricsHost, port: metricsPort });
  const claim = await claimPorts(addresses);
  const { filter: _filter, ...portable } = options;
  const set = new ThreadSet(threads, { ...portable, port, metricsPort }, logger);
  const first = await set.start().catch((error: unknown) => {
    claim.release();
    throw error;
  });
  try {
    assertSoleListener(addresses);
  } catch (error) {
    // Closed, not terminated: a thread ended while its uWS loop runs takes the process down.
    await set.stop({ kind: 'close' });
    claim.release();
    throw error;
  }
  logger.info('worker threads listening', { threads, url: first.url, pid: process.pid });
  return {
    port,
    url: first.url,
    uwsBuild: first.uwsBuild,
    threads,
    metricsUrl: first.metricsUrl,
    reload: () => set.send({ kind: 'reload' }),
    drain: () => set.stop({ kind: 'drain' }).finally(claim.release),
    close: () => set.stop({ kind: 'close' }).finally(claim.release),
  };
}

export function threadNodeId(namespace: string, index: number): string {
  return `${namespace}/t${index}`;
}
