// `shoal-tracker`: reads flags/env/config, raises the open-files limit, starts the server,
// prints `listening ws://host:port` on stdout, reloads the allow-list on SIGHUP and shuts
// down on SIGTERM/SIGINT.

import { loadCliOptions, usage } from './config.js';
import { createLogger } from './logger.js';
import { raiseOpenFilesLimit } from './open-files-limit.js';
import { startTracker } from './server.js';

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
  const logger = createLogger(cli.options.logLevel ?? 'info');
  const limit = raiseOpenFilesLimit();
  logger.info('open files limit', { soft: Number.isFinite(limit.soft) ? limit.soft : String(limit.soft), hard: Number.isFinite(limit.hard) ? limit.hard : String(limit.hard), note: limit.note });

  let tracker;
  try {
    tracker = await startTracker(cli.options, { logger });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    logger.error('cannot start', { error: message, config: cli.configFile });
    process.stderr.write(`shoal-tracker: ${message}\n`);
    process.exitCode = 1;
    return;
  }
  process.stdout.write(`listening ${tracker.url}\n`);

  process.on('SIGHUP', () => {
    try {
      tracker.reloadAllowList();
    } catch (error) {
      // A bad edit must not take the tracker down: keep the previous list and say why.
      logger.error('allow-list reload failed, keeping the previous list', { error: error instanceof Error ? error.message : String(error) });
    }
  });
  const shutdown = (signal: string) => {
    logger.info('shutting down', { signal });
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    void tracker.close().then(() => {
      clearTimeout(force);
      process.exit(0);
    });
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}
