// `shoal-tracker`: reads flags/env/config, raises the open-files limit, starts the server,
// prints `listening ws://host:port` on stdout, reloads the allow-list and the TLS certificate
// on SIGHUP, drains then shuts down on SIGTERM, shuts down at once on SIGINT.

import { DEFAULT_OPTIONS, loadCliOptions, usage } from './config.js';
import { createLogger } from './logger.js';
import { raiseOpenFilesLimit } from './open-files-limit.js';
import { availableParallelism } from 'node:os';
import { startTracker } from './server.js';
import { startWorkers } from './workers.js';
import { loadUws, UwsLoadError } from './uws-loader.js';
import { TRACKER_VERSION } from './version.js';

/** What `--version` prints: this package, Node, and the uWebSockets.js build that would run. */
function versionLine(): string {
  let uws: string;
  try {
    const build = loadUws();
    uws = `${build.packageName}@${build.packageVersion} (${build.binary})`;
  } catch (error) {
    uws = `no uWebSockets.js build loads here${error instanceof UwsLoadError ? `: ${error.advice}` : ''}`;
  }
  return `shoal-tracker ${TRACKER_VERSION} (node ${process.version}, ${uws})`;
}

export async function main(argv: readonly string[]): Promise<void> {
  let cli;
  try {
    cli = loadCliOptions(argv, process.env);
  } catch (error) {
    process.stderr.write(`shoal-tracker: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 2;
    return;
  }
  if (cli.help) {
    process.stdout.write(`${usage()}\n`);
    return;
  }
  if (cli.version) {
    process.stdout.write(`${versionLine()}\n`);
    return;
  }
  const logger = createLogger(cli.options.logLevel ?? 'info');
  const limit = raiseOpenFilesLimit();
  logger.info('open files limit', { soft: Number.isFinite(limit.soft) ? limit.soft : String(limit.soft), hard: Number.isFinite(limit.hard) ? limit.hard : String(limit.hard), note: limit.note });

  // One thread per core unless told otherwise; one thread runs without a cluster of threads.
  const threads = (cli.options.workers ?? 0) === 0 ? availableParallelism() : cli.options.workers!;
  let tracker: { url: string; reloadAllowList?: () => number; reloadCertificate?: () => Promise<void>; reload?: () => void; drain(): Promise<void>; close(): Promise<void> };
  try {
    tracker = threads > 1 ? await startWorkers({ ...cli.options, workers: threads }, { logger }) : await startTracker(cli.options, { logger });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    logger.error('cannot start', { error: message, config: cli.configFile });
    process.stderr.write(`shoal-tracker: ${message}\n`);
    // Now, not when the loop empties: worker threads that were told to close never end.
    process.exit(1);
  }
  process.stdout.write(`listening ${tracker.url}\n`);

  process.on('SIGHUP', () => {
    if (tracker.reload) return tracker.reload();
    try {
      tracker.reloadAllowList?.();
    } catch (error) {
      // A bad edit must not take the tracker down: keep the previous list and say why.
      logger.error('allow-list reload failed, keeping the previous list', { error: error instanceof Error ? error.message : String(error) });
    }
    tracker.reloadCertificate?.().catch((error: unknown) => {
      logger.error('certificate reload failed, keeping the previous certificate', { error: error instanceof Error ? error.message : String(error) });
    });
  });
  const drainSec = cli.options.drainSec ?? DEFAULT_OPTIONS.drainSec;
  const shutdown = (signal: string, stop: () => Promise<void>, graceSec: number) => {
    logger.info('shutting down', { signal });
    const force = setTimeout(() => process.exit(1), (graceSec + 10) * 1000);
    force.unref();
    void stop().then(() => {
      clearTimeout(force);
      if (threads === 1) process.exit(0);
      // Worker threads holding uWS cannot end: the builds do not release their event loop, and
      // Node aborts (or crashes) tearing such a thread down, which process.exit() does. Every
      // socket is closed by now, so the process ends by the signal it was sent, as `kill`
      // expects (systemd counts SIGTERM and SIGINT as a clean stop).
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    });
  };
  process.once('SIGTERM', () => shutdown('SIGTERM', () => tracker.drain(), drainSec));
  // A second signal during the drain, or Ctrl-C: stop now.
  process.on('SIGINT', () => shutdown('SIGINT', () => tracker.close(), 0));
}
