// The tracker's plain HTTP answers: /health (draining, Redis state), and responses produced
// asynchronously (stats gathered from sibling threads) that must not write to an aborted request.

import type { HttpResponse } from '@trufflesuite/uws-js-unofficial';
import type { Logger } from './logger.js';
import type { RedisStatus } from './redis-bus.js';

export interface HealthState {
  draining: boolean;
  /** null without Redis. */
  redis: RedisStatus | null;
}

export function sendHttp(res: HttpResponse, status: string, contentType: string, body: string): void {
  res.writeStatus(status).writeHeader('content-type', contentType).writeHeader('cache-control', 'no-store').end(body);
}

export function sendHealth(res: HttpResponse, state: HealthState): void {
  if (state.draining) return sendHttp(res, '503 Service Unavailable', 'application/json', '{"status":"draining"}');
  const redis = state.redis;
  // Without Redis the node still serves its own peers: it says so, and stays in rotation. Why
  // Redis is away (its address, its error) is for the log and /stats.json, not this public path.
  if (redis && !redis.up) {
    return sendHttp(res, '200 OK', 'application/json', JSON.stringify({ status: 'degraded', redis: 'unavailable', since: new Date(redis.sinceMs).toISOString() }));
  }
  sendHttp(res, '200 OK', 'application/json', redis ? '{"status":"ok","redis":"up"}' : '{"status":"ok"}');
}

/** Answers once `produce` resolves, unless the client went away meanwhile. */
export function respondLater(res: HttpResponse, logger: Logger, produce: () => Promise<[contentType: string, body: string]>): void {
  let aborted = false;
  res.onAborted(() => {
    aborted = true;
  });
  produce().then(
    ([contentType, body]) => {
      if (!aborted) res.cork(() => sendHttp(res, '200 OK', contentType, body));
    },
    (error: unknown) => {
      logger.error('stats failed', { error: error instanceof Error ? error.message : String(error) });
      if (!aborted) res.cork(() => sendHttp(res, '500 Internal Server Error', 'text/plain', 'stats failed\n'));
    },
  );
}
