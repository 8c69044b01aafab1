// A raw WebSocket tracker client for tests: sends JSON, queues every received message, and
// waits for the next one matching a predicate.

import WebSocket from 'ws';

export type Message = Record<string, unknown>;

export class WsPeer {
  readonly received: Message[] = [];
  closeCode: number | null = null;
  private waiters: { match: (m: Message) => boolean; resolve: (m: Message) => void }[] = [];
  private closeWaiters: ((code: number) => void)[] = [];

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => {
      let message: Message;
      try {
        message = JSON.parse(data.toString()) as Message;
      } catch {
        message = { unparsable: data.toString() };
      }
      const waiter = this.waiters.find((w) => w.match(message));
      if (waiter) {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        waiter.resolve(message);
      } else {
        this.received.push(message);
      }
    });
    socket.on('close', (code) => {
      this.closeCode = code;
      for (const resolve of this.closeWaiters.splice(0)) resolve(code);
    });
    socket.on('error', () => {});
  }

  static connect(url: string, headers: Record<string, string> = {}): Promise<WsPeer> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url, { headers, perMessageDeflate: false });
      socket.once('open', () => resolve(new WsPeer(socket)));
      socket.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
      socket.once('error', reject);
    });
  }

  send(message: unknown): void {
    this.socket.send(typeof message === 'string' ? message : JSON.stringify(message));
  }

  /** The next message (already queued or still to come) that matches; rejects after timeoutMs. */
  next(match: (m: Message) => boolean = () => true, timeoutMs = 3000): Promise<Message> {
    const index = this.received.findIndex(match);
    if (index >= 0) return Promise.resolve(this.received.splice(index, 1)[0]!);
    return new Promise((resolve, reject) => {
      const waiter = {
        match,
        resolve: (m: Message) => {
          clearTimeout(timer);
          resolve(m);
        },
      };
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        reject(new Error(`no matching message within ${timeoutMs} ms; queued: ${JSON.stringify(this.received).slice(0, 400)}`));
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }

  /** Resolves true if no matching message arrives within ms. */
  async silent(match: (m: Message) => boolean, ms = 300): Promise<boolean> {
    try {
      await this.next(match, ms);
      return false;
    } catch {
      return true;
    }
  }

  closed(timeoutMs = 3000): Promise<number> {
    if (this.closeCode !== null) return Promise.resolve(this.closeCode);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('socket not closed in time')), timeoutMs);
      this.closeWaiters.push((code) => {
        clearTimeout(timer);
        resolve(code);
      });
    });
  }

  close(): void {
    this.socket.close();
  }
}

/** A 20-char binary id: a readable prefix padded with bytes 0x80.. so non-ASCII chars are exercised. */
export function binaryId(label: string): string {
  let id = label.slice(0, 12);
  while (id.length < 20) id += String.fromCharCode(0x80 + ((id.length * 37 + label.length) % 0x7f));
  return id;
}

export const sdp = (kind: 'offer' | 'answer', tag: string) => ({ type: kind, sdp: `v=0 ${tag}` });
