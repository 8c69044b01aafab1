// The uWebSockets.js adapter: accepts or refuses upgrades (limits, origins), moves text frames
// between sockets and the message handler, serves /health, /stats.json and /metrics, drains and
// shuts down gracefully, swaps in a new TLS certificate without dropping a socket.

import { accessSync, constants } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { HttpRequest, HttpResponse, TemplatedApp, WebSocket, us_listen_socket } from '@trufflesuite/uws-js-unofficial';
import { readInfoHashAllowList } from './allow-list.js';
import { ConfigError, resolveOptions, type TrackerOptions } from './config.js';
import { createLogger, type Logger } from './logger.js';
import { readOpenFilesLimit } from './open-files-limit.js';
import { clientIp } from './client-ip.js';
import { joinCluster, type ThreadPlace } from './cluster-setup.js';
import { redactUrl } from './redis-bus.js';
import { mergeThreadStats } from './worker-stats.js';
import { findFreePort } from './free-port.js';
import { LatencyHistogram } from './latency-histogram.js';
import { EventLoopMonitor, countOpenFds } from './process-metrics.js';
import { RateWindow, renderPrometheus, type RejectedConnections, type TrackerStats } from './stats.js';
import { CLOSE_POLICY, MessageHandler } from './message-handler.js';
import { CLOSE_GOING_AWAY, CLOSE_INTERNAL_ERROR, UwsConnection, type SocketData } from './uws-connection.js';
import { respondLater, sendHealth, sendHttp, type HealthState } from './http-responses.js';
import { loadUws, type UwsBuild } from './uws-loader.js';
import { TRACKER_VERSION } from './version.js';

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

function describeBuild(build: UwsBuild): string {
  return `${build.packageName}@${build.packageVersion} (${build.binary})`;
}

export async function startTracker(partial: Partial<TrackerOptions> = {}, dependencies: StartDependencies = {}): Promise<RunningTracker> {
  const options = resolveOptions(partial);
  const logger = dependencies.logger ?? createLogger(options.logLevel);
  const build = loadUws(options.uwsCandidates);
  const uws = build.uws;
  const uwsBuild = describeBuild(build);

  const handler = new MessageHandler({
    announceIntervalSec: options.announceIntervalSec,
    peerTimeoutSec: options.peerTimeoutSec,
    maxOffersPerAnnounce: options.maxOffersPerAnnounce,
    maxSwarmsPerConnection: options.maxSwarmsPerConnection,
    maxScrapeInfoHashes: options.maxScrapeInfoHashes,
    fullScrape: options.fullScrape,
    messagesPerSecond: options.messagesPerSecond,
    messageBurst: options.messageBurst,
    filter: options.filter,
  });
  const reloadAllowList = (): number => {
    if (!options.infoHashAllowList) return 0;
    const allowed = readInfoHashAllowList(options.infoHashAllowList);
    const evicted = handler.setAllowedInfoHashes(allowed);
    logger.info('info_hash allow-list loaded', { file: options.infoHashAllowList, infoHashes: allowed.size, peersEvicted: evicted });
    return allowed.size;
  };
  reloadAllowList();
  if (options.cert && options.key) {
    for (const [field, file] of [['cert', options.cert], ['key', options.key]] as const) {
      try {
        accessSync(file, constants.R_OK);
      } catch {
        throw new ConfigError(`\`${field}\`: cannot read ${file}`);
      }
    }
  }


  const sockets = new Set<WebSocket<SocketData>>();
  const connectionsById = new Map<number, UwsConnection>();
  const connectionsPerIp = new Map<string, number>();
  const rejected: RejectedConnections = { draining: 0, maxConnections: 0, maxConnectionsPerIp: 0, origin: 0 };
  const allowedOrigins = options.allowedOrigins.length > 0 ? new Set(options.allowedOrigins) : null;
  let connectionsOpened = 0;
  let slowSocketsClosed = 0;
  /** /health says 503 (drain started); sockets are still served. */
  let draining = false;
  /** close() started: upgrades are refused. */
  let closed = false;
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
    localConnection: (id) => connectionsById.get(id),
    summary: () => ({ url: publicUrl, connections: sockets.size, peers: localPeers(), startedMs }),
  });
  if (cluster) localPeers = () => cluster.membership.countLocal().peers;
  const membership = cluster?.membership ?? null;
  const bus = cluster?.bus ?? null;
  const redisBus = cluster?.redisBus ?? null;
  const rateWindow = new RateWindow();
  const announceLatency = new LatencyHistogram();
  const eventLoop = new EventLoopMonitor();

  const refuse = (res: HttpResponse, status: string, reason: keyof RejectedConnections, text: string) => {
    rejected[reason]++;
    res.writeStatus(status).writeHeader('content-type', 'text/plain').end(text);
  };

  const slowLimits = {
    maxBackpressureBytes: options.maxBackpressureBytes,
    onSlow: () => {
      slowSocketsClosed++;
    },
  };

  const stats = (): TrackerStats => {
    const nowMs = Date.now();
    const counts = handler.registry.counts();
    const memory = process.memoryUsage();
    const cpu = process.cpuUsage();
    let limit: { soft: number | null; hard: number | null } = { soft: null, hard: null };
    try {
      const read = readOpenFilesLimit();
      limit = { soft: Number.isFinite(read.soft) ? read.soft : null, hard: Number.isFinite(read.hard) ? read.hard : null };
    } catch {
      // not Linux: leave unknown
    }
    return {
      uptimeSec: Math.round((nowMs - startedMs) / 1000),
      version: TRACKER_VERSION,
      node: process.version,
      uws: uwsBuild,
      connections: sockets.size,
      ...counts,
      rates: rateWindow.rates(nowMs, handler.counters),
      totals: { ...handler.counters, connectionsOpened, slowSocketsClosed },
      rejectedConnections: { ...rejected },
      memory: { rssBytes: memory.rss, heapUsedBytes: memory.heapUsed, externalBytes: memory.external },
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
      openFilesLimit: limit,
      fds: { open: countOpenFds(), max: limit.soft },
      eventLoopLag: eventLoop.lag(),
      announceLatency: announceLatency.snapshot(),
      cluster: membership
        ? {
            nodeId: bus!.nodeId,
            nodes: redisBus ? redisBus.clusterNodes.length : (thread?.threads ?? 1),
            ...prefixed(membership.countLocal()),
            relays: { ...membership.counters, sendFailures: redisBus?.failures ?? 0 },
            redis: redisBus ? { ...redisBus.redisStatus, nodes: redisBus.clusterNodes } : null,
          }
        : null,
      threads: 1,
    };
  };
  /** This process's figures: this thread's, plus its sibling threads' when there are any. */
  const processStats = async (): Promise<TrackerStats> => (thread ? mergeThreadStats(stats(), await thread.siblingStats.collect()) : stats());
  thread?.siblingStats.answerWith(stats);

  const health = (): HealthState => ({ draining, redis: redisBus?.redisStatus ?? null });
  const addStatsRoutes = (app: TemplatedApp) => {
    app.get('/health', (res) => sendHealth(res, health()));
    if (options.statsRoutes) {
      app.get('/stats.json', (res) => respondLater(res, logger, async () => ['application/json', JSON.stringify(await processStats())]));
      app.get('/metrics', (res) => respondLater(res, logger, async () => ['text/plain; version=0.0.4', renderPrometheus(await processStats())]));
    }
  };
  const separateMetrics = options.metricsHost !== null && options.metricsPort !== null;

  /** One app serves the tracker port; a certificate reload builds another with the same handlers. */
  const createTrackerApp = (): TemplatedApp => {
    const app = options.cert && options.key ? uws.SSLApp({ cert_file_name: options.cert, key_file_name: options.key }) : uws.App();
    app.ws<SocketData>('/*', {
      compression: uws.DISABLED,
      maxPayloadLength: options.maxPayloadBytes,
      maxBackpressure: options.maxBackpressureBytes,
      closeOnBackpressureLimit: 1,
      idleTimeout: options.idleTimeoutSec,
      sendPingsAutomatically: options.idleTimeoutSec > 0,
      upgrade(res: HttpResponse, req: HttpRequest, context) {
        const key = req.getHeader('sec-websocket-key');
        const protocol = req.getHeader('sec-websocket-protocol');
        const extensions = req.getHeader('sec-websocket-extensions');
        const origin = req.getHeader('origin');
        const ip = clientIp(Buffer.from(res.getRemoteAddressAsText()).toString(), options.trustProxy > 0 ? req.getHeader('x-forwarded-for') : '', options.trustProxy);
        if (closed) return refuse(res, '503 Service Unavailable', 'draining', 'tracker is shutting down');
        if (options.maxConnections > 0 && sockets.size >= options.maxConnections) {
          return refuse(res, '503 Service Unavailable', 'maxConnections', 'tracker is full');
        }
        if (options.maxConnectionsPerIp > 0 && (connectionsPerIp.get(ip) ?? 0) >= options.maxConnectionsPerIp) {
          return refuse(res, '429 Too Many Requests', 'maxConnectionsPerIp', 'too many connections from this address');
        }
        if (allowedOrigins && !allowedOrigins.has(origin)) return refuse(res, '403 Forbidden', 'origin', 'origin not allowed');
        res.upgrade<SocketData>({ connection: new UwsConnection(ip, origin, slowLimits) }, key, protocol, extensions, context);
      },
      open(ws) {
        const connection = ws.getUserData().connection;
        connection.ws = ws;
        handler.handleOpen(connection, Date.now());
        sockets.add(ws);
        connectionsById.set(connection.connectionId, connection);
        connectionsPerIp.set(connection.ip, (connectionsPerIp.get(connection.ip) ?? 0) + 1);
        connectionsOpened++;
      },
      message(ws, message, isBinary) {
        const connection = ws.getUserData().connection;
        try {
          // uWS has checked that a text frame is valid UTF-8, so the handler may read its bytes
          // directly; a binary frame is decoded (invalid bytes become U+FFFD) before parsing.
          const frame = isBinary ? Buffer.from(message).toString('utf8') : Buffer.from(message);
          const announcesBefore = handler.counters.announces;
          const startedAt = performance.now();
          handler.handleMessage(connection, frame, Date.now());
          if (handler.counters.announces !== announcesBefore) announceLatency.observe((performance.now() - startedAt) / 1000);
        } catch (error) {
          // A bug must cost one socket, not the process and every other peer with it.
          logger.error('message handling failed; closing that socket', { error: error instanceof Error ? error.stack ?? error.message : String(error), ip: connection.ip });
          connection.close(CLOSE_INTERNAL_ERROR, 'internal error');
        }
      },
      close(ws) {
        const connection = ws.getUserData().connection;
        connection.ws = null;
        handler.handleClose(connection);
        sockets.delete(ws);
        connectionsById.delete(connection.connectionId);
        const count = (connectionsPerIp.get(connection.ip) ?? 1) - 1;
        if (count > 0) connectionsPerIp.set(connection.ip, count);
        else connectionsPerIp.delete(connection.ip);
      },
    });
    if (!separateMetrics) addStatsRoutes(app);
    else app.get('/health', (res) => sendHealth(res, health()));
    app.any('/*', (res) => sendHttp(res, '404 Not Found', 'text/plain', 'shoal tracker: connect with a WebSocket (ws:// or wss://)\n'));
    return app;
  };

  const port = options.port === 0 ? await findFreePort(options.host) : options.port;
  let listenSocket = await listen(createTrackerApp(), options.host, port);
  let metricsSocket: us_listen_socket | null = null;
  let metricsUrl: string | null = null;
  if (options.metricsHost !== null && options.metricsPort !== null) {
    const metricsApp = uws.App();
    addStatsRoutes(metricsApp);
    metricsApp.any('/*', (res) => sendHttp(res, '404 Not Found', 'text/plain', 'shoal tracker metrics: /health, /stats.json, /metrics\n'));
    const metricsPort = options.metricsPort === 0 ? await findFreePort(options.metricsHost) : options.metricsPort;
    metricsSocket = await listen(metricsApp, options.metricsHost, metricsPort);
    metricsUrl = `http://${hostForUrl(options.metricsHost)}:${metricsPort}`;
  }
  const url = `${options.cert ? 'wss' : 'ws'}://${hostForUrl(options.host)}:${port}`;
  publicUrl = url;

  const expiryTimer = setInterval(() => {
    const removed = handler.expire(Date.now());
    if (removed > 0) logger.debug('peers expired', { removed });
  }, EXPIRY_SWEEP_MS);
  const rateTimer = setInterval(() => rateWindow.sample(Date.now(), handler.counters), RATE_SAMPLE_MS);
  rateWindow.sample(Date.now(), handler.counters);
  expiryTimer.unref();
  rateTimer.unref();

  logger.info('listening', { url, uws: uwsBuild, tls: Boolean(options.cert), metrics: metricsUrl, node: bus?.nodeId, redis: options.redis ? redactUrl(options.redis) : undefined });

  const reloadCertificate = async (): Promise<void> => {
    if (!options.cert || !options.key || closed) return;
    // A second app listens on the same port (SO_REUSEPORT) before the old listener closes, so no
    // connection attempt is refused; sockets already open stay on the old app, untouched.
    const app = createTrackerApp();
    const next = await listen(app, options.host, port).catch(() => {
      throw new ConfigError(`cannot use the certificate ${options.cert} with key ${options.key}`);
    });
    uws.us_listen_socket_close(listenSocket);
    listenSocket = next;
    logger.info('TLS certificate reloaded', { cert: options.cert });
  };

  let closing: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closing ??= new Promise<void>((resolve) => {
      draining = true;
      closed = true;
      clearInterval(expiryTimer);
      clearInterval(rateTimer);
      eventLoop.destroy();
      uws.us_listen_socket_close(listenSocket);
      if (metricsSocket) uws.us_listen_socket_close(metricsSocket);
      const open = sockets.size;
      for (const ws of [...sockets]) ws.getUserData().connection.close(CLOSE_GOING_AWAY, 'tracker shutting down');
      // After the sockets: their peers' leaves still go out; then one goodbye covers the rest.
      membership?.leave();
      bus?.close();
      logger.info('closed', { socketsClosed: open });
      // Close handlers run inside end(); one tick lets uWS flush the close frames.
      setImmediate(resolve);
    });
    return closing;
  };

  const drain = async (seconds = options.drainSec): Promise<void> => {
    if (closed) return close();
    draining = true;
    logger.info('draining', { seconds, connections: sockets.size });
    if (seconds > 0) await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    return close();
  };

  return {
    port,
    url,
    uwsBuild,
    metricsUrl,
    stats,
    metrics: () => renderPrometheus(stats()),
    reloadAllowList,
    reloadCertificate,
    drain,
    close,
  };
}

function prefixed(counts: { peers: number; seeders: number }): { localPeers: number; localSeeders: number } {
  return { localPeers: counts.peers, localSeeders: counts.seeders };
}

function listen(app: TemplatedApp, host: string, port: number): Promise<us_listen_socket> {
  return new Promise((resolve, reject) => {
    app.listen(host, port, (socket) => {
      if (socket) resolve(socket);
      else reject(new ConfigError(`cannot listen on ${host}:${port} (address in use, or not permitted)`));
    });
  });
}

/** 0.0.0.0 and :: are shown as 127.0.0.1; IPv6 addresses get brackets. */
function hostForUrl(host: string): string {
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return shown.includes(':') ? `[${shown}]` : shown;
}

export { CLOSE_POLICY };
