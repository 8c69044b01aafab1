// The uWS apps: the tracker's port (WebSocket upgrades checked against the limits, frames to the
// message handler, /health, /stats.json, /metrics) and the separate stats listener.

import { performance } from 'node:perf_hooks';
import type { HttpRequest, HttpResponse, TemplatedApp, WebSocketBehavior, us_socket_context_t } from '@trufflesuite/uws-js-unofficial';
import { clientIp } from './client-ip.js';
import type { TrackerOptions } from './config.js';
import { respondLater, sendHealth, sendHttp, type HealthState } from './http-responses.js';
import type { LatencyHistogram } from './latency-histogram.js';
import type { Logger } from './logger.js';
import type { MessageHandler } from './message-handler.js';
import type { SocketBook } from './socket-book.js';
import { renderPrometheus, type TrackerStats } from './stats.js';
import { CLOSE_INTERNAL_ERROR, UwsConnection, type SocketData } from './uws-connection.js';
import type { Uws } from './uws-loader.js';

/** Where the tracker stands: /health says 503 once draining; upgrades are refused once closed. */
export interface ServingState {
  draining: boolean;
  closed: boolean;
}

export interface AppContext {
  uws: Uws;
  options: TrackerOptions;
  handler: MessageHandler;
  book: SocketBook;
  logger: Logger;
  announceLatency: LatencyHistogram;
  state: ServingState;
  health(): HealthState;
  /** This process's figures (every thread's), at most STATS_CACHE_MS old. */
  processStats(): Promise<TrackerStats>;
}

/** The app on the tracker's port; a certificate reload builds another with the same handlers. */
export function createTrackerApp(context: AppContext): TemplatedApp {
  const { uws, options } = context;
  const app = options.cert && options.key ? uws.SSLApp({ cert_file_name: options.cert, key_file_name: options.key }) : uws.App();
  app.ws<SocketData>('/*', websocketBehavior(context));
  if (options.metricsHost !== null && options.metricsPort !== null) app.get('/health', (res) => sendHealth(res, context.health()));
  else addStatsRoutes(app, context);
  app.any('/*', (res) => sendHttp(res, '404 Not Found', 'text/plain', 'shoal tracker: connect with a WebSocket (ws:// or wss://)\n'));
  return app;
}

/** The app of `metricsHost`:`metricsPort`. */
export function createMetricsApp(context: AppContext): TemplatedApp {
  const app = context.uws.App();
  addStatsRoutes(app, context);
  app.any('/*', (res) => sendHttp(res, '404 Not Found', 'text/plain', 'shoal tracker metrics: /health, /stats.json, /metrics\n'));
  return app;
}

function addStatsRoutes(app: TemplatedApp, context: AppContext): void {
  const { logger } = context;
  app.get('/health', (res) => sendHealth(res, context.health()));
  if (!context.options.statsRoutes) return;
  app.get('/stats.json', (res) => respondLater(res, logger, async () => ['application/json', JSON.stringify(await context.processStats())]));
  app.get('/metrics', (res) => respondLater(res, logger, async () => ['text/plain; version=0.0.4', renderPrometheus(await context.processStats())]));
}

function websocketBehavior(context: AppContext): WebSocketBehavior<SocketData> {
  const { uws, options, handler, book } = context;
  const slowLimits = {
    maxBackpressureBytes: options.maxBackpressureBytes,
    onSlow: () => {
      book.slowClosed++;
    },
  };
  return {
    compression: uws.DISABLED,
    maxPayloadLength: options.maxPayloadBytes,
    maxBackpressure: options.maxBackpressureBytes,
    closeOnBackpressureLimit: 1,
    idleTimeout: options.idleTimeoutSec,
    sendPingsAutomatically: options.idleTimeoutSec > 0,
    upgrade(res: HttpResponse, req: HttpRequest, socketContext: us_socket_context_t) {
      const key = req.getHeader('sec-websocket-key');
      const protocol = req.getHeader('sec-websocket-protocol');
      const extensions = req.getHeader('sec-websocket-extensions');
      const origin = req.getHeader('origin');
      const ip = clientIp(Buffer.from(res.getRemoteAddressAsText()).toString(), options.trustProxy > 0 ? req.getHeader('x-forwarded-for') : '', options.trustProxy);
      const refusal = book.refusal(ip, origin, context.state.closed);
      if (refusal) {
        if (refusal.reason === 'maxConnectionsPerIp') warnPerIpLimit(context, ip);
        return void res.writeStatus(refusal.status).writeHeader('content-type', 'text/plain').end(refusal.text);
      }
      res.upgrade<SocketData>({ connection: new UwsConnection(ip, origin, slowLimits) }, key, protocol, extensions, socketContext);
    },
    open(ws) {
      const connection = ws.getUserData().connection;
      connection.ws = ws;
      handler.handleOpen(connection, Date.now());
      book.add(ws, connection);
    },
    message(ws, message, isBinary) {
      receiveFrame(context, ws.getUserData().connection, message, isBinary);
    },
    close(ws) {
      const connection = ws.getUserData().connection;
      connection.ws = null;
      handler.handleClose(connection);
      book.remove(ws, connection);
    },
  };
}

const PER_IP_WARNING_EVERY_MS = 60_000;
let perIpWarnedMs = -Infinity;

/** At most once a minute: an address at its limit may be a flood, or a proxy the tracker was not told of. */
function warnPerIpLimit(context: AppContext, ip: string): void {
  const nowMs = Date.now();
  if (nowMs - perIpWarnedMs < PER_IP_WARNING_EVERY_MS) return;
  perIpWarnedMs = nowMs;
  context.logger.warn('connections refused: too many from one address', {
    ip,
    maxConnectionsPerIp: context.options.maxConnectionsPerIp,
    note: 'if this is your proxy or load balancer, set trustProxy (it then counts the clients behind it); a large NAT may need a higher maxConnectionsPerIp',
  });
}

function receiveFrame(context: AppContext, connection: UwsConnection, message: ArrayBuffer, isBinary: boolean): void {
  const { handler } = context;
  try {
    // uWS has checked that a text frame is valid UTF-8, so the handler may read its bytes
    // directly; a binary frame is decoded (invalid bytes become U+FFFD) before parsing.
    const frame = isBinary ? Buffer.from(message).toString('utf8') : Buffer.from(message);
    const announcesBefore = handler.counters.announces;
    const startedAt = performance.now();
    handler.handleMessage(connection, frame, Date.now());
    if (handler.counters.announces !== announcesBefore) context.announceLatency.observe((performance.now() - startedAt) / 1000);
  } catch (error) {
    // A bug must cost one socket, not the process and every other peer with it.
    context.logger.error('message handling failed; closing that socket', { error: error instanceof Error ? error.stack ?? error.message : String(error), ip: connection.ip });
    connection.close(CLOSE_INTERNAL_ERROR, 'internal error');
  }
}
