// One client socket on uWS as the message handler sees it (a Connection), with what the socket
// layer adds: the backpressure limit, and frames held back while the cluster learns of a join or
// leave.

import type { WebSocket } from '@trufflesuite/uws-js-unofficial';
import type { AddressableConnection } from './cluster-membership.js';
import { Connection } from './connection.js';

export const CLOSE_GOING_AWAY = 1001;
export const CLOSE_TRY_AGAIN_LATER = 1013;
export const CLOSE_INTERNAL_ERROR = 1011;

/** A connection on a uWS socket. */
/** uWS copies the user data's own properties onto its socket object (prototypes are lost), so the socket carries one reference. */
export interface SocketData {
  connection: UwsConnection;
}

let nextConnectionId = 1;

export class UwsConnection extends Connection implements AddressableConnection {
  ws: WebSocket<SocketData> | null = null;
  /** How other cluster nodes address this socket when they relay to it. */
  readonly connectionId = nextConnectionId++ >>> 0;
  constructor(
    ip: string,
    origin: string,
    private readonly limits: { maxBackpressureBytes: number; onSlow: () => void },
  ) {
    super(ip, origin);
  }

  /** Frames held back until the cluster has heard of this socket's latest join or leave. */
  private held: (string | Uint8Array)[] | null = null;
  private holds = 0;

  holdUntil(handedOver: Promise<void>): void {
    this.holds++;
    this.held ??= [];
    void handedOver.finally(() => {
      if (--this.holds > 0) return;
      const frames = this.held ?? [];
      this.held = null;
      const ws = this.ws;
      if (!ws) return;
      ws.cork(() => {
        for (const frame of frames) if (!this.send(frame)) break;
      });
    });
  }

  send(frame: string | Uint8Array): boolean {
    const ws = this.ws;
    if (this.closed || !ws) return false;
    if (this.held) {
      // The bytes are only valid during this call.
      this.held.push(typeof frame === 'string' ? frame : frame.slice());
      return true;
    }
    // 0: sent with nothing buffered; 1: sent but data is buffered; 2: dropped.
    const status = ws.send(frame, false);
    if (status !== 0 && (status === 2 || ws.getBufferedAmount() > this.limits.maxBackpressureBytes)) {
      this.limits.onSlow();
      this.close(CLOSE_TRY_AGAIN_LATER, 'too slow: backpressure limit');
      return false;
    }
    return true;
  }

  close(code: number, reason: string): void {
    const ws = this.ws;
    if (this.closed || !ws) return;
    // The message handler's close bookkeeping (handleClose) runs in uWS's close callback, called
    // from end().
    this.ws = null;
    ws.end(code, reason);
  }
}

