// One worker thread of `--workers N`: a whole tracker on the shared port, in the threads' cluster.

import { parentPort, workerData } from 'node:worker_threads';
import { createLogger } from './logger.js';
import { startTracker, type RunningTracker } from './server.js';
import { SiblingStats } from './worker-stats.js';
import { threadNodeId, type WorkerCommand, type WorkerData, type WorkerReport } from './workers.js';

const data = workerData as WorkerData;
const port = parentPort!;
const report = (message: WorkerReport) => port.postMessage(message);
const logger = createLogger(data.options.logLevel ?? 'info', `shoal:tracker:thread-${data.index}`);
const siblingStats = new SiblingStats(data.namespace, data.index, data.threads - 1);

let tracker: RunningTracker;
try {
  tracker = await startTracker(data.options, {
    logger,
    thread: { namespace: data.namespace, nodeId: threadNodeId(data.namespace, data.index), threads: data.threads, siblingStats },
  });
} catch (error) {
  report({ kind: 'failed', message: error instanceof Error ? error.message : String(error) });
  process.exit(1);
}
report({ kind: 'listening', url: tracker.url, uwsBuild: tracker.uwsBuild, metricsUrl: tracker.metricsUrl });

port.on('message', (command: WorkerCommand) => {
  if (command.kind === 'reload') {
    try {
      tracker.reloadAllowList();
    } catch (error) {
      logger.error('allow-list reload failed, keeping the previous list', { error: error instanceof Error ? error.message : String(error) });
    }
    tracker.reloadCertificate().catch((error: unknown) => {
      logger.error('certificate reload failed, keeping the previous certificate', { error: error instanceof Error ? error.message : String(error) });
    });
    return;
  }
  const stop = command.kind === 'drain' ? tracker.drain() : tracker.close();
  void stop.then(() => {
    siblingStats.close();
    report({ kind: 'closed' });
  });
});
