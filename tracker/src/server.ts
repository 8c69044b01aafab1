// startTracker: puts a tracker together (message handler, sockets, cluster, uWS apps and
// listeners, timers) and hands back its controls: stats, reloads of the allow-list and the TLS
// certificate, drain and close.

import { readInfoHashAllowList } from './allow-list.js';
import { resolveOptions, type TrackerOptions } from './config.js';
import { joinCluster, type JoinedCluster, type ThreadPlace } from './cluster-setup.js';
import { LatencyHistogram } from './latency-histogram.js';
import { createLogger, type Logger } from './logger.js';
import { CLOSE_POLICY, MessageHandler } from './message-handler.js';
import { EventLoopMonitor } from './process-metrics.js';
import { redactUrl } from './redis-bus.js';
import { SocketBook } from './socket-book.js';
import { STATS_CACHE_MS, cachedFor, snapshotStats } from './stats-snapshot.js';
import { RateWindow, renderPrometheus, type TrackerStats } from './stats.js';
import { checkTlsFiles } from './tls-files.js';
import { createTrackerApp, type AppContext, type ServingState } from './tracker-app.js';
import { TrackerListeners } from './tracker-listeners.js';
import { CLOSE_GOING_AWAY } from './uws-connection.js';
import { loadUws } from './uws-loader.js';
import { mergeThreadStats } from './worker-stats.js';

export interface RunningTracker {
  /** The bound port (useful with `port: 0`). */
  readonly port: number;
  /** ws://host:port (wss:// with TLS); 0.0.0.0 is shown as 127.0.0.1. */
  readonly url: string;
  /** Which uWebSockets.js build runs, e.g. "@trufflesuite/uws-js-unofficial@20.30.0-unofficial.0 (uws_linux_x64_115.node)". */
  readonly uwsBuild: string;
  stats(): TrackerStats;
  metrics(): string;
  /** With `metricsHost`/`metricsPort`: http://host:port of the separate stats listener. */
  readonly metricsUrl: string | null;
  /** Re-reads the info_hash allow-list file; returns how many info_hashes it holds. */
  reloadAllowList(): number;
  /**
   * Re-reads the TLS certificate and key: new connections get the new certificate, open ones
   * keep theirs. Rejects (keeping the old certificate) when the files cannot be used.
   */
  reloadCertificate(): Promise<void>;
  /** /health answers 503 for `seconds` (default: drainSec) while everything is still served, then close(). */
  drain(seconds?: number): Promise<void>;
  /** Stops accepting, closes every socket with 1001 "going away", stops timers. */
  close(): Promise<void>;
}

export interface StartDependencies {
  logger?: Logger;
  /** Set by the worker-thread entry: this thread joins its siblings' cluster over a ThreadBus. */
  thread?: ThreadPlace;
}

const EXPIRY_SWEEP_MS = 5_000;
const RATE_SAMPLE_MS = 1_000;

/** What the running tracker's controls act on. */
interface Parts {
  options: TrackerOptions;
  context: AppContext;
  listeners: TrackerListeners;
  cluster: JoinedCluster | null;
  eventLoop: EventLoopMonitor;
  timers: NodeJS.Timeout[];
}

export async function startTracker(partial: Partial<TrackerOptions> = {}, dependencies: StartDependencies = {}): Promise<RunningTracker> {
  const options = resolveOptions(partial);
  const logger = dependencies.logger ?? createLogger(options.logLevel);
  const build = loadUws(options.uwsCandidates);
  const uwsBuild = `${build.packageName}@${build.packageVersion} (${build.binary})`;
  if (options.cert && options.key) checkTlsFiles(options.cert, options.key);
  const handler = new MessageHandler(options);
  handler.onFilterError = (error) => logger.error('announce filter threw; the announce was refused', { error: error instanceof Error ? error.stack ?? error.message : String(error) });
  const reloadAllowList = (): number => {
    if (!options.infoHashAllowList) return 0;
    const allowed = readInfoHashAllowList(options.infoHashAllowList);
    const evicted = handler.setAllowedInfoHashes(allowed);
    logger.info('info_hash allow-list loaded', { file: options.infoHashAllowList, infoHashes: allowed.size, peersEvicted: evicted });
    return allowed.size;
  };
  reloadAllowList();

  const book = new SocketBook(options);
  const state: ServingState = { draining: false, closed: false };
  const startedMs = Date.now();
  let publicUrl = '';
  // Worker threads of this process share swarms over a ThreadBus, nodes on several machines
  // over Redis (with --workers and --redis, each thread is a Redis node).
  const thread = dependencies.thread;
  // The summary may be asked for while joining (the first lease), before `cluster` is assigned.
  let localPeers = () => 0;
  const cluster = await joinCluster({
    options,
    logger,
    thread,
    registry: handler.registry,
    offers: handler.offers,
    localConnection: (id) => book.connection(id),
    summary: () => ({ url: publicUrl, connections: book.size, peers: localPeers(), startedMs }),
  });
  if (cluster) localPeers = () => cluster.membership.countLocal().peers;

  const rateWindow = new RateWindow();
  const announceLatency = new LatencyHistogram();
  const eventLoop = new EventLoopMonitor();
  const sources = { startedMs, uwsBuild, handler, book, rateWindow, eventLoop, announceLatency, cluster, thread };
  const stats = (): TrackerStats => snapshotStats(sources, Date.now());
  // A sibling merging the process's figures takes the process-wide ones from its own snapshot.
  thread?.siblingStats.answerWith(cachedFor(STATS_CACHE_MS, () => snapshotStats(sources, Date.now(), false)));
  const context: AppContext = {
    uws: build.uws,
    options,
    handler,
    book,
    logger,
    announceLatency,
    state,
    health: () => ({ draining: state.draining, redis: cluster?.redisBus?.redisStatus ?? null }),
    processStats: cachedFor(STATS_CACHE_MS, async () => (thread ? mergeThreadStats(stats(), await thread.siblingStats.collect()) : stats())),
  };

  const listeners = await TrackerListeners.open(context, !thread).catch((error: unknown) => {
    cluster?.bus.close();
    eventLoop.destroy();
    throw error;
  });
  const url = listeners.url(Boolean(options.cert));
  publicUrl = url;
  const timers = startTimers(handler, rateWindow, logger);
  logger.info('listening', { url, uws: uwsBuild, tls: Boolean(options.cert), metrics: listeners.metricsUrl, node: cluster?.bus.nodeId, redis: options.redis ? redactUrl(options.redis) : undefined, pid: thread ? undefined : process.pid });

  const controls = trackerControls({ options, context, listeners, cluster, eventLoop, timers });
  return { port: listeners.port, url, uwsBuild, metricsUrl: listeners.metricsUrl, stats, metrics: () => renderPrometheus(stats()), reloadAllowList, ...controls };
}

function startTimers(handler: MessageHandler, rateWindow: RateWindow, logger: Logger): NodeJS.Timeout[] {
  const expiryTimer = setInterval(() => {
    const removed = handler.expire(Date.now());
    if (removed > 0) logger.debug('peers expired', { removed });
  }, EXPIRY_SWEEP_MS);
  const rateTimer = setInterval(() => rateWindow.sample(Date.now(), handler.counters), RATE_SAMPLE_MS);
  rateWindow.sample(Date.now(), handler.counters);
  expiryTimer.unref();
  rateTimer.unref();
  return [expiryTimer, rateTimer];
}

function trackerControls(parts: Parts): Pick<RunningTracker, 'reloadCertificate' | 'drain' | 'close'> {
  const { options, context, listeners, cluster } = parts;
  const { state, logger, book } = context;

  const reloadCertificate = async (): Promise<void> => {
    if (!options.cert || !options.key || state.closed) return;
    checkTlsFiles(options.cert, options.key);
    await listeners.replaceTrackerApp(createTrackerApp(context));
    logger.info('TLS certificate reloaded', { cert: options.cert });
  };

  let closing: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closing ??= new Promise<void>((resolve) => {
      state.draining = true;
      state.closed = true;
      for (const timer of parts.timers) clearInterval(timer);
      parts.eventLoop.destroy();
      listeners.close();
      const open = book.closeAll(CLOSE_GOING_AWAY, 'tracker shutting down');
      // After the sockets: their peers' leaves still go out; then one goodbye covers the rest.
      cluster?.membership.leave();
      cluster?.bus.close();
      logger.info('closed', { socketsClosed: open });
      // Close handlers run inside end(); one tick lets uWS flush the close frames.
      setImmediate(resolve);
    });
    return closing;
  };

  const drain = async (seconds = options.drainSec): Promise<void> => {
    if (state.closed) return close();
    state.draining = true;
    logger.info('draining', { seconds, connections: book.size });
    if (seconds > 0) await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    return close();
  };

  return { reloadCertificate, drain, close };
}

export { CLOSE_POLICY };
