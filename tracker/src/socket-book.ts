// The tracker's open sockets: found by connection id (relays from other nodes), counted per
// client address (maxConnectionsPerIp), and the upgrades refused, by reason, for the stats.

import type { WebSocket } from '@trufflesuite/uws-js-unofficial';
import type { TrackerOptions } from './config.js';
import type { RejectedConnections } from './stats.js';
import type { SocketData, UwsConnection } from './uws-connection.js';

export interface Refusal {
  /** HTTP status line. */
  status: string;
  reason: keyof RejectedConnections;
  text: string;
}

export class SocketBook {
  readonly sockets = new Set<WebSocket<SocketData>>();
  readonly rejected: RejectedConnections = { draining: 0, maxConnections: 0, maxConnectionsPerIp: 0, origin: 0 };
  opened = 0;
  slowClosed = 0;
  private readonly byId = new Map<number, UwsConnection>();
  private readonly perIp = new Map<string, number>();
  private readonly allowedOrigins: ReadonlySet<string> | null;

  constructor(private readonly limits: Pick<TrackerOptions, 'maxConnections' | 'maxConnectionsPerIp' | 'allowedOrigins'>) {
    this.allowedOrigins = limits.allowedOrigins.length > 0 ? new Set(limits.allowedOrigins) : null;
  }

  get size(): number {
    return this.sockets.size;
  }

  connection(connectionId: number): UwsConnection | undefined {
    return this.byId.get(connectionId);
  }

  /** Why an upgrade from `ip` with `origin` is refused (and counted), or null to accept it. */
  refusal(ip: string, origin: string, closing: boolean): Refusal | null {
    const { maxConnections, maxConnectionsPerIp } = this.limits;
    let refusal: Refusal | null = null;
    if (closing) refusal = { status: '503 Service Unavailable', reason: 'draining', text: 'tracker is shutting down' };
    else if (maxConnections > 0 && this.sockets.size >= maxConnections) refusal = { status: '503 Service Unavailable', reason: 'maxConnections', text: 'tracker is full' };
    else if (maxConnectionsPerIp > 0 && (this.perIp.get(ip) ?? 0) >= maxConnectionsPerIp) {
      refusal = { status: '429 Too Many Requests', reason: 'maxConnectionsPerIp', text: 'too many connections from this address' };
    } else if (this.allowedOrigins && !this.allowedOrigins.has(origin)) refusal = { status: '403 Forbidden', reason: 'origin', text: 'origin not allowed' };
    if (refusal) this.rejected[refusal.reason]++;
    return refusal;
  }

  add(ws: WebSocket<SocketData>, connection: UwsConnection): void {
    this.sockets.add(ws);
    this.byId.set(connection.connectionId, connection);
    this.perIp.set(connection.ip, (this.perIp.get(connection.ip) ?? 0) + 1);
    this.opened++;
  }

  remove(ws: WebSocket<SocketData>, connection: UwsConnection): void {
    this.sockets.delete(ws);
    this.byId.delete(connection.connectionId);
    const count = (this.perIp.get(connection.ip) ?? 1) - 1;
    if (count > 0) this.perIp.set(connection.ip, count);
    else this.perIp.delete(connection.ip);
  }

  /** Closes every socket (their close callbacks remove them); returns how many were open. */
  closeAll(code: number, reason: string): number {
    const open = this.sockets.size;
    for (const ws of [...this.sockets]) ws.getUserData().connection.close(code, reason);
    return open;
  }
}
