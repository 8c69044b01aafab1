// One WebSocket to one tracker, shared by every swarm this peer joins there: JSON in and out,
// and reconnection with exponential backoff and jitter until destroyed.
import { ShoalError } from '../errors.js';
import type { Clock, TimerId } from '../types.js';
import type { WebSocketConstructor, WebSocketLike } from './signaling-options.js';

export interface TrackerSocketOptions {
  WebSocket: WebSocketConstructor;
  clock: Clock;
  reconnectMinMs: number;
  reconnectMaxMs: number;
}

export interface TrackerSocketEvents {
  /** Connected (again): every swarm must announce itself, the tracker has forgotten us. */
  open(): void;
  /** A message that parsed as a JSON object. */
  message(message: Record<string, unknown>): void;
  /** The connection failed or broke; a reconnect is already scheduled. */
  error(error: ShoalError): void;
  warning(message: string): void;
}

const noop = () => {};

export class TrackerSocket {
  connected = false;
  /** The tracker answered since the connection last opened: it is reachable. */
  answering = false;
  private socket: WebSocketLike | undefined;
  private failures = 0;
  private reconnectTimer: TimerId | undefined;

  constructor(
    readonly url: string,
    private readonly options: TrackerSocketOptions,
    private readonly events: TrackerSocketEvents,
  ) {
    this.connect();
  }

  /** Sends if connected; returns whether it did. */
  send(message: object): boolean {
    if (!this.connected) return false;
    this.socket!.send(JSON.stringify(message));
    return true;
  }

  destroy(): void {
    this.options.clock.clearTimeout(this.reconnectTimer);
    this.release();
  }

  private connect(): void {
    this.reconnectTimer = undefined;
    let socket: WebSocketLike;
    try {
      socket = this.socket = new this.options.WebSocket(this.url);
    } catch (error) {
      return this.lost(`cannot open: ${(error as Error).message}`);
    }
    socket.onopen = () => {
      this.connected = true;
      this.events.open();
    };
    socket.onmessage = ({ data }) => {
      // Only a tracker that answers counts as reachable: one that accepts and drops us keeps backing off.
      this.failures = 0;
      this.answering = true;
      let message: unknown;
      try {
        message = typeof data === 'string' ? JSON.parse(data) : undefined;
      } catch {
        // Reported below with the other unusable messages.
      }
      if (typeof message === 'object' && message !== null && !Array.isArray(message)) {
        this.events.message(message as Record<string, unknown>);
      } else {
        this.events.warning(`${this.url}: ignored a message that is not a JSON object`);
      }
    };
    // Browsers give no detail with `error`; `close` always follows it.
    socket.onerror = noop;
    socket.onclose = ({ code }) =>
      this.lost(this.connected ? `connection lost (code ${code ?? '?'})` : `unreachable (code ${code ?? '?'})`);
  }

  private lost(what: string): void {
    this.release();
    const ceilingMs = Math.min(this.options.reconnectMaxMs, this.options.reconnectMinMs * 2 ** this.failures++);
    const delayMs = Math.round(ceilingMs * (0.5 + Math.random() / 2));
    this.reconnectTimer = this.options.clock.setTimeout(() => this.connect(), delayMs);
    this.events.error(new ShoalError('TRACKER', `${this.url}: ${what}; reconnecting in ${(delayMs / 1000).toFixed(1)} s`));
  }

  private release(): void {
    const { socket } = this;
    this.socket = undefined;
    this.connected = false;
    this.answering = false;
    if (!socket) return;
    socket.onopen = socket.onmessage = socket.onclose = null;
    socket.onerror = noop;
    try {
      socket.close();
    } catch {
      // Closing a socket that never opened may throw in some runtimes; it is released either way.
    }
  }
}
