// How the CLI's tracker answers signals: SIGHUP reloads the allow-list and the TLS certificate,
// SIGTERM drains then stops, SIGINT (or a second signal during the drain) stops at once. Under
// npm, which does not forward SIGHUP, the end of npm stops the tracker as SIGTERM would, so a
// SIGHUP sent to npx never leaves a tracker behind holding the port.

import type { Logger } from './logger.js';
import { findNpmWrapper, watchNpmWrapper } from './npm-wrapper.js';

/** One thread's tracker (reloadAllowList, reloadCertificate) or the threads' (reload). */
export interface SignalledTracker {
  reloadAllowList?: () => number;
  reloadCertificate?: () => Promise<void>;
  reload?: () => void;
  drain(): Promise<void>;
  close(): Promise<void>;
}

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

function reload(tracker: SignalledTracker, logger: Logger): void {
  if (tracker.reload) return tracker.reload();
  try {
    tracker.reloadAllowList?.();
  } catch (error) {
    // A bad edit must not take the tracker down: keep the previous list and say why.
    logger.error('allow-list reload failed, keeping the previous list', { error: errorText(error) });
  }
  tracker.reloadCertificate?.().catch((error: unknown) => {
    logger.error('certificate reload failed, keeping the previous certificate', { error: errorText(error) });
  });
}

export function installSignalHandlers(tracker: SignalledTracker, logger: Logger, settings: { threads: number; drainSec: number }): void {
  let stopping = false;
  const shutdown = (signal: 'SIGTERM' | 'SIGINT', stop: () => Promise<void>, graceSec: number, reason: string = signal) => {
    stopping = true;
    logger.info('shutting down', { signal, reason });
    const force = setTimeout(() => process.exit(1), (graceSec + 10) * 1000);
    force.unref();
    void stop().then(() => {
      clearTimeout(force);
      if (settings.threads === 1) process.exit(0);
      // Worker threads holding uWS cannot end: the builds do not release their event loop, and
      // Node aborts (or crashes) tearing such a thread down, which process.exit() does. Every
      // socket is closed by now, so the process ends by the signal it was sent, as `kill`
      // expects (systemd counts SIGTERM and SIGINT as a clean stop).
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    });
  };
  process.on('SIGHUP', () => reload(tracker, logger));
  process.once('SIGTERM', () => shutdown('SIGTERM', () => tracker.drain(), settings.drainSec));
  // A second signal during the drain, or Ctrl-C: stop now.
  process.on('SIGINT', () => shutdown('SIGINT', () => tracker.close(), 0));

  const npm = findNpmWrapper();
  if (!npm) return;
  logger.info('started by npm', {
    npmPid: npm.pid,
    pid: process.pid,
    note: `npm forwards only SIGINT and SIGTERM: to reload, send SIGHUP to pid ${process.pid} (this tracker), or run the bin without npm; when npm exits, the tracker drains and exits too`,
  });
  watchNpmWrapper(npm, () => {
    if (stopping) return;
    logger.warn('npm, which started this tracker, is gone: draining, then exiting', { npmPid: npm.pid });
    shutdown('SIGTERM', () => tracker.drain(), settings.drainSec, 'npm exited');
  });
}
