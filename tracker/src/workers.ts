// `--workers N`: N threads serve one port. Each thread is a whole tracker (uWS app, message
// handler, registry) listening on the same port with SO_REUSEPORT, so the kernel spreads connections
// over them; the threads form a cluster over a ThreadBus (see cluster-membership.ts), which
// relays an announce's offers to peers whose sockets another thread holds. This main thread
// only starts, signals and, if one dies, restarts them.

import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { ConfigError, resolveOptions, type TrackerOptions } from './config.js';
import { findFreePort } from './free-port.js';
import { createLogger, type Logger } from './logger.js';
import { ThreadBus } from './thread-bus.js';

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

export interface WorkerData {
  options: Partial<TrackerOptions>;
  namespace: string;
  index: number;
  threads: number;
}

export async function startWorkers(partial: Partial<TrackerOptions>, dependencies: { logger?: Logger } = {}): Promise<RunningWorkers> {
  const options = resolveOptions(partial);
  const logger = dependencies.logger ?? createLogger(options.logLevel);
  if (options.filter) throw new ConfigError('options: `filter` cannot cross into worker threads; use `workers: 1` with a filter');
  const threads = options.workers === 0 ? availableParallelism() : options.workers;
  // Every thread must listen on the same numbered port (see free-port.ts).
  const port = options.port === 0 ? await findFreePort(options.host) : options.port;
  const metricsPort = options.metricsHost !== null && options.metricsPort === 0 ? await findFreePort(options.metricsHost) : options.metricsPort;
  const { filter: _filter, ...portable } = options;
  const threadOptions: Partial<TrackerOptions> = { ...portable, port, metricsPort };
  const namespace = `${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const workers: (Worker | null)[] = new Array<Worker | null>(threads).fill(null);
  let closing = false;
  const closedWaiters = new Set<() => void>();
  /** Threads that closed their sockets. They are not left to exit on their own: uWS builds do not all free their loop, so a thread ending crashes Node (SIGSEGV/abort) instead of exiting; the process ends them all at once when it exits. */
  const closedThreads = new Set<number>();

  const spawnThread = (index: number): Promise<Extract<WorkerReport, { kind: 'listening' }>> =>
    new Promise((resolve, reject) => {
      const workerData: WorkerData = { options: threadOptions, namespace, index, threads };
      const worker = new Worker(new URL('./worker-entry.js', import.meta.url), { workerData });
      workers[index] = worker;
      let listening = false;
      worker.on('message', (report: WorkerReport) => {
        if (report.kind === 'listening') {
          listening = true;
          resolve(report);
        } else if (report.kind === 'closed') {
          closedThreads.add(index);
          if (closedThreads.size === threads) for (const done of closedWaiters) done();
        } else if (report.kind === 'failed') {
          reject(new Error(report.message));
        }
      });
      worker.on('error', (error) => {
        if (!listening) reject(error);
        else logger.error('worker thread failed', { thread: index, error: error instanceof Error ? error.stack ?? error.message : JSON.stringify(error) });
      });
      worker.on('exit', (code) => {
        workers[index] = null;
        // Its peers are gone with its sockets: the other threads must forget them now.
        ThreadBus.announceLost(namespace, threadNodeId(namespace, index));
        if (closing) {
          closedThreads.add(index);
          if (closedThreads.size === threads) for (const done of closedWaiters) done();
          return;
        }
        if (!listening) return;
        logger.error('worker thread exited; starting another', { thread: index, code });
        setTimeout(() => {
          if (!closing) spawnThread(index).catch((error: unknown) => logger.error('worker thread restart failed', { thread: index, error: String(error) }));
        }, 1000).unref();
      });
    });

  let first: Extract<WorkerReport, { kind: 'listening' }>;
  try {
    const reports = await Promise.all(Array.from({ length: threads }, (_, index) => spawnThread(index)));
    first = reports[0]!;
  } catch (error) {
    closing = true;
    await Promise.all(workers.map((worker) => worker?.terminate()));
    throw error;
  }
  logger.info('worker threads listening', { threads, url: first.url });

  const stopAll = (command: WorkerCommand): Promise<void> => {
    closing = true;
    const done = new Promise<void>((resolve) => {
      if (closedThreads.size === threads) return resolve();
      closedWaiters.add(resolve);
    });
    for (const worker of workers) worker?.postMessage(command);
    return done;
  };

  return {
    port,
    url: first.url,
    uwsBuild: first.uwsBuild,
    threads,
    metricsUrl: first.metricsUrl,
    reload: () => {
      for (const worker of workers) worker?.postMessage({ kind: 'reload' } satisfies WorkerCommand);
    },
    drain: () => stopAll({ kind: 'drain' }),
    close: () => stopAll({ kind: 'close' }),
  };
}

export function threadNodeId(namespace: string, index: number): string {
  return `${namespace}/t${index}`;
}
