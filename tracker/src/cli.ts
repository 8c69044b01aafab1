// `shoal-tracker`: reads flags/env/config, raises the open-files limit, starts the server (one
// thread or several), prints `listening ws://host:port` on stdout, then answers signals
// (cli-signals.ts).

import { DEFAULT_OPTIONS, loadCliOptions, usage } from './config.js';
import { installSignalHandlers, type SignalledTracker } from './cli-signals.js';
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
  let tracker: SignalledTracker & { url: string };
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

  const drainSec = cli.options.drainSec ?? DEFAULT_OPTIONS.drainSec;
  installSignalHandlers(tracker, logger, { threads, drainSec });
}
