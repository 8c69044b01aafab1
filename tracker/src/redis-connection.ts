// One connection to Redis (or Valkey), speaking its wire protocol (RESP2) directly: commands with
// their replies in order, pub/sub messages, and reconnection. It is what the cluster bus needs
// and no more. A general client costs the bus most of its CPU: a profile of a node at 1,000
// announces/s showed a fifth of its time in the client's command objects, promises, pipelines and
// stream plumbing around each PUBLISH and each message received (BENCHMARKS.md).
//
// Commands fail at once while the connection is down (a relay that cannot be sent now is worthless
// later); the connection retries by itself and says when it is ready again.

import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';

/** A reply: integer, bulk string (null when absent), simple string, array, or an error reply. */
export type Reply = number | Buffer | string | null | Reply[] | RedisReplyError;

export class RedisReplyError extends Error {}

export interface RedisConnectionOptions {
  url: string;
  /** CLIENT SETNAME, so that `CLIENT LIST` shows who is who. */
  name: string;
  /**
   * A connection whose oldest command has waited this long for its reply is dropped and made
   * again: a Redis that hangs (stopped, swapping) would otherwise hold every reply, and every
   * announce response held for a join's acknowledgement, for as long as its TCP connection lives.
   */
  replyTimeoutMs?: number;
  /** Channels to subscribe to on every (re)connection; the connection then only receives messages. */
  channels?: string[];
  onMessage?: (channel: Buffer, message: Buffer) => void;
  /** Connected, authenticated and subscribed (again). */
  onReady: () => void;
  onDown: (reason: string) => void;
}

const CONNECT_TIMEOUT_MS = 10_000;
const REPLY_TIMEOUT_MS = 5_000;
const READ_BUFFER_BYTES = 64 * 1024;
const CRLF = Buffer.from('\r\n');

export class RedisConnection {
  private socket: Socket | null = null;
  private ready = false;
  private closed = false;
  private attempts = 0;
  private retryTimer: NodeJS.Timeout | null = null;
  /** Commands awaiting their reply, oldest first, with when they were written. */
  private readonly pending: { resolve: (reply: Reply) => void; reject: (error: Error) => void; sentMs: number }[] = [];
  private readonly reader = new ReplyReader((reply) => this.reply(reply));
  private subscriptionsPending = 0;
  private corked = false;
  private firstOpen: { resolve: () => void; reject: (error: Error) => void } | null = null;
  private readonly target: { tls: boolean; host: string; port: number; user: string; password: string; db: number };

  constructor(private readonly options: RedisConnectionOptions) {
    const url = new URL(options.url);
    this.target = {
      tls: url.protocol === 'rediss:',
      host: url.hostname.replace(/^\[(.*)\]$/, '$1') || '127.0.0.1',
      port: Number(url.port || 6379),
      user: decodeURIComponent(url.username),
      password: decodeURIComponent(url.password),
      db: Number(url.pathname.slice(1) || 0),
    };
  }

  get isReady(): boolean {
    return this.ready;
  }

  /** Connects; settles with the first attempt (later attempts go on by themselves after a failure). */
  open(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.firstOpen = { resolve, reject };
      this.attempt();
    });
  }

  command(args: (string | Uint8Array)[]): Promise<Reply> {
    if (!this.ready) return Promise.reject(new Error('Redis connection not ready'));
    return this.send(args);
  }

  /** PUBLISH of `parts` concatenated, encoded into one buffer with no intermediate copy. */
  publish(channel: string, parts: Uint8Array[]): Promise<Reply> {
    if (!this.ready) return Promise.reject(new Error('Redis connection not ready'));
    let length = 0;
    for (const part of parts) length += part.length;
    const channelBytes = Buffer.byteLength(channel);
    const head = `*3\r\n$7\r\nPUBLISH\r\n$${channelBytes}\r\n${channel}\r\n$${length}\r\n`;
    const frame = Buffer.allocUnsafe(head.length + length + 2);
    let offset = frame.write(head, 0, 'latin1');
    for (const part of parts) {
      frame.set(part, offset);
      offset += part.length;
    }
    frame.set(CRLF, offset);
    return this.write(frame);
  }

  /** QUIT after the commands already sent; the connection does not come back. */
  async quit(): Promise<void> {
    const socket = this.socket;
    this.stop();
    if (!socket || !this.ready) return void socket?.destroy();
    await this.write(encode(['QUIT'])).catch(() => {});
    socket.end();
  }

  /** Drops the connection now; it does not come back. */
  disconnect(): void {
    const socket = this.socket;
    this.stop();
    socket?.destroy();
  }

  private stop(): void {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
  }

  private send(args: (string | Uint8Array)[]): Promise<Reply> {
    return this.write(encode(args));
  }

  private write(frame: Buffer): Promise<Reply> {
    const socket = this.socket;
    if (!socket || socket.destroyed) return Promise.reject(new Error('connection closed'));
    if (!this.corked) {
      // Commands written in the same tick (a flush of the bus's batches: one PUBLISH per node)
      // leave in one system call, and reach Redis in one read.
      this.corked = true;
      socket.cork();
      process.nextTick(() => {
        this.corked = false;
        socket.uncork();
      });
    }
    return new Promise((resolve, reject) => {
      this.pending.push({ resolve, reject, sentMs: Date.now() });
      socket.write(frame);
    });
  }

  private attempt(): void {
    if (this.closed) return;
    this.attempts++;
    const { tls, host, port } = this.target;
    const read = (chunk: Buffer) => {
      try {
        this.reader.push(chunk);
      } catch (error) {
        // Not Redis on the other end, or a reply we cannot read: start over on a new connection.
        socket.destroy(error instanceof Error ? error : new Error(String(error)));
      }
    };
    // Without TLS, reads land in one buffer reused for every read (`onread`), skipping the stream
    // machinery and an allocation per read; the reader copies what it keeps beyond the call.
    const readBuffer = Buffer.allocUnsafe(READ_BUFFER_BYTES);
    const socket = tls
      ? tlsConnect({ host, port, servername: host })
      : netConnect({
          host,
          port,
          onread: {
            buffer: readBuffer,
            callback: (bytes: number) => {
              read(readBuffer.subarray(0, bytes));
              return true;
            },
          },
        });
    if (tls) socket.on('data', read);
    this.socket = socket;
    socket.setNoDelay(true);
    socket.setKeepAlive(true, 30_000);
    socket.setTimeout(CONNECT_TIMEOUT_MS, () => socket.destroy(new Error('connect timeout')));
    let failure = 'connection closed';
    socket.on('error', (error: Error) => (failure = error.message));
    socket.once(tls ? 'secureConnect' : 'connect', () => void this.handshake(socket));
    const replyTimeoutMs = this.options.replyTimeoutMs ?? REPLY_TIMEOUT_MS;
    const watchdog = setInterval(() => {
      const oldest = this.pending[0];
      if (this.socket === socket && oldest && Date.now() - oldest.sentMs > replyTimeoutMs) {
        socket.destroy(new Error(`no reply from Redis within ${replyTimeoutMs} ms`));
      }
    }, Math.min(1000, replyTimeoutMs / 2));
    watchdog.unref();
    socket.once('close', () => {
      clearInterval(watchdog);
      if (this.socket !== socket) return;
      this.socket = null;
      const wasReady = this.ready;
      this.ready = false;
      this.reader.reset();
      for (const waiter of this.pending.splice(0)) waiter.reject(new Error(failure));
      this.firstOpen?.reject(new Error(failure));
      this.firstOpen = null;
      if (this.closed) return;
      this.options.onDown(wasReady ? failure : `${failure} (attempt ${this.attempts})`);
      this.retryTimer = setTimeout(() => this.attempt(), Math.min(200 * this.attempts, 2000));
      this.retryTimer.unref();
    });
  }

  private async handshake(socket: Socket): Promise<void> {
    try {
      const { user, password, db } = this.target;
      if (password) await this.send(user ? ['AUTH', user, password] : ['AUTH', password]);
      if (db) await this.send(['SELECT', String(db)]);
      // Only for CLIENT LIST; a proxy or managed Redis that refuses it is no reason not to connect.
      await this.send(['CLIENT', 'SETNAME', this.options.name.replace(/[^!-~]/g, '_')]).catch(() => {});
      const channels = this.options.channels ?? [];
      if (channels.length > 0) {
        this.subscriptionsPending = channels.length;
        await new Promise<void>((resolve, reject) => {
          // Its confirmations arrive as pushes (see reply()); the waiter settles with the last one.
          this.pending.push({ resolve: () => resolve(), reject, sentMs: Date.now() });
          socket.write(encode(['SUBSCRIBE', ...channels]));
        });
      }
    } catch (error) {
      socket.destroy(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    if (this.socket !== socket || this.closed) return;
    socket.setTimeout(0);
    this.ready = true;
    this.attempts = 0;
    this.firstOpen?.resolve();
    this.firstOpen = null;
    this.options.onReady();
  }

  private reply(reply: Reply): void {
    if (this.options.channels && Array.isArray(reply) && reply.length === 3 && Buffer.isBuffer(reply[0])) {
      const kind = reply[0].toString('latin1');
      if (kind === 'message') return this.options.onMessage?.(reply[1] as Buffer, reply[2] as Buffer);
      if (kind === 'subscribe') {
        if (--this.subscriptionsPending === 0) this.pending.shift()?.resolve(reply);
        return;
      }
    }
    const waiter = this.pending.shift();
    if (!waiter) return;
    if (reply instanceof RedisReplyError) waiter.reject(reply);
    // The reply's bytes may sit in the reused read buffer; a waiter reads them later.
    else waiter.resolve(detach(reply));
  }
}

/** A copy of a reply that shares no bytes with the read buffer. */
function detach(reply: Reply): Reply {
  if (Buffer.isBuffer(reply)) return Buffer.from(reply);
  if (Array.isArray(reply)) return reply.map(detach);
  return reply;
}

/** A command as RESP: an array of bulk strings. */
function encode(args: (string | Uint8Array)[]): Buffer {
  const parts: Buffer[] = [Buffer.from(`*${args.length}\r\n`)];
  for (const arg of args) {
    const bytes = typeof arg === 'string' ? Buffer.from(arg) : arg;
    parts.push(Buffer.from(`$${bytes.length}\r\n`), bytes as Buffer, CRLF);
  }
  return Buffer.concat(parts);
}

/**
 * Reads replies from a byte stream. A reply split over several reads is parsed once all of it has
 * arrived: the bytes it still needs are known from its bulk lengths, so a large message is
 * gathered chunk by chunk and joined once, not re-joined at every read. Replies emitted may share
 * bytes with the chunk pushed; what is kept for later is copied.
 */
export class ReplyReader {
  private chunks: Buffer[] = [];
  private bytes = 0;
  /** Bytes (counted from the first chunk) needed before parsing is worth trying again. */
  private needed = 0;
  /** Set by parse(): how many bytes the incomplete reply needs at least. */
  private want = 0;

  constructor(private readonly emit: (reply: Reply) => void) {}

  reset(): void {
    this.chunks = [];
    this.bytes = 0;
    this.needed = 0;
  }

  push(chunk: Buffer): void {
    this.bytes += chunk.length;
    if (this.bytes < this.needed) {
      // Kept beyond this call: a copy (the caller may reuse its buffer).
      this.chunks.push(Buffer.from(chunk));
      return;
    }
    this.chunks.push(chunk);
    const buffer = this.chunks.length === 1 ? chunk : Buffer.concat(this.chunks, this.bytes);
    let position = 0;
    while (position < buffer.length) {
      const value: { reply: Reply } = { reply: null };
      const end = this.parse(buffer, position, value);
      if (end < 0) {
        const rest = Buffer.from(buffer.subarray(position));
        this.chunks = [rest];
        this.bytes = rest.length;
        this.needed = this.want - position;
        return;
      }
      position = end;
      this.emit(value.reply);
    }
    this.reset();
  }

  /** Parses one reply at `start` into `out`; returns where it ends, or -1 (setting `want`) if incomplete. */
  private parse(buffer: Buffer, start: number, out: { reply: Reply }): number {
    const lineEnd = buffer.indexOf(10, start);
    if (lineEnd < 0) {
      this.want = buffer.length + 1;
      return -1;
    }
    const type = buffer[start];
    const next = lineEnd + 1;
    switch (type) {
      case 0x2b: // +simple string
        out.reply = buffer.toString('latin1', start + 1, lineEnd - 1);
        return next;
      case 0x2d: // -error
        out.reply = new RedisReplyError(buffer.toString('utf8', start + 1, lineEnd - 1));
        return next;
      case 0x3a: // :integer
        out.reply = readInteger(buffer, start + 1, lineEnd - 1);
        return next;
      case 0x24: {
        // $bulk string
        const length = readInteger(buffer, start + 1, lineEnd - 1);
        if (length < 0) {
          out.reply = null;
          return next;
        }
        const end = next + length + 2;
        if (end > buffer.length) {
          this.want = end;
          return -1;
        }
        out.reply = buffer.subarray(next, next + length);
        return end;
      }
      case 0x2a: {
        // *array
        const count = readInteger(buffer, start + 1, lineEnd - 1);
        if (count < 0) {
          out.reply = null;
          return next;
        }
        const items: Reply[] = [];
        let position = next;
        for (let i = 0; i < count; i++) {
          const item: { reply: Reply } = { reply: null };
          position = this.parse(buffer, position, item);
          if (position < 0) return -1;
          items.push(item.reply);
        }
        out.reply = items;
        return position;
      }
      default:
        throw new Error(`not a Redis reply (byte ${type})`);
    }
  }
}

function readInteger(buffer: Buffer, start: number, end: number): number {
  let negative = false;
  let value = 0;
  for (let i = start; i < end; i++) {
    const digit = buffer[i]!;
    if (digit === 0x2d) negative = true;
    else value = value * 10 + (digit - 0x30);
  }
  return negative ? -value : value;
}
