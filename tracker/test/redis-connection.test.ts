// The cluster bus's own Redis connection: replies read correctly however the bytes are split,
// and commands, AUTH, SELECT and pub/sub against a real redis-server.

import { afterEach, describe, expect, it } from 'vitest';
import { RedisConnection, RedisReplyError, ReplyReader, type Reply } from '../src/redis-connection.js';
import { startRedis } from './support/processes.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Replies as plain values, for comparison (Buffers as strings, errors as { error }). */
const plain = (reply: Reply): unknown =>
  Array.isArray(reply) ? reply.map(plain) : Buffer.isBuffer(reply) ? reply.toString('latin1') : reply instanceof RedisReplyError ? { error: reply.message } : reply;

function readAll(chunks: Buffer[]): unknown[] {
  const replies: unknown[] = [];
  const reader = new ReplyReader((reply) => replies.push(plain(reply)));
  for (const chunk of chunks) reader.push(chunk);
  return replies;
}

describe('ReplyReader', () => {
  const big = Buffer.alloc(200_000, 'x');
  const stream = Buffer.concat([
    Buffer.from('+OK\r\n:42\r\n:-7\r\n$-1\r\n$0\r\n\r\n-ERR wrong type\r\n'),
    Buffer.from('*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$4\r\n\x00\r\n\xff\r\n', 'latin1'),
    Buffer.from('*2\r\n$1\r\n0\r\n*2\r\n$1\r\na\r\n$-1\r\n'),
    Buffer.from(`$${big.length}\r\n`), big, Buffer.from('\r\n:1\r\n'),
  ]);
  const expected = ['OK', 42, -7, null, '', { error: 'ERR wrong type' }, ['message', 'ch', '\x00\r\n\xff'], ['0', ['a', null]], big.toString('latin1'), 1];

  it('reads every kind of reply, in one piece', () => {
    expect(readAll([stream])).toEqual(expected);
  });

  it('reads the same replies split at any byte, and a large reply delivered in small reads', () => {
    const small = stream.subarray(0, stream.indexOf(`$${big.length}`));
    for (let cut = 1; cut < small.length; cut++) {
      expect(readAll([small.subarray(0, cut), small.subarray(cut)])).toEqual(expected.slice(0, 8));
    }
    const pieces: Buffer[] = [];
    for (let offset = 0; offset < stream.length; offset += 1000) pieces.push(stream.subarray(offset, offset + 1000));
    expect(readAll(pieces)).toEqual(expected);
  });

  it('refuses bytes that are not a reply', () => {
    expect(() => readAll([Buffer.from('HTTP/1.1 400 Bad Request\r\n')])).toThrow(/not a Redis reply/);
  });
});

describe('RedisConnection on a real redis-server', () => {
  it('authenticates, selects its database, runs commands and relays pub/sub messages byte for byte', { timeout: 20_000 }, async () => {
    const redis = await startRedis(undefined, ['--requirepass', 's3cret']);
    cleanups.push(() => redis.close());
    const url = `redis://:s3cret@127.0.0.1:${redis.port}/3`;
    const received: Buffer[] = [];
    const noop = () => {};
    const subscriber = new RedisConnection({ url, name: 'test sub', channels: ['c1'], onMessage: (_channel, message) => received.push(Buffer.from(message)), onReady: noop, onDown: noop });
    const publisher = new RedisConnection({ url, name: 'test pub', onReady: noop, onDown: noop });
    cleanups.push(() => subscriber.disconnect(), () => publisher.quit());
    await Promise.all([subscriber.open(), publisher.open()]);

    expect(await publisher.command(['SET', 'k', 'v', 'PX', '10000'])).toBe('OK');
    expect(plain(await publisher.command(['GET', 'k']))).toBe('v');
    await expect(publisher.command(['INCR', 'k'])).rejects.toBeInstanceOf(RedisReplyError);
    // SELECT 3 took effect: database 0 does not have the key.
    expect(plain(await publisher.command(['CLIENT', 'LIST']))).toMatch(/name=test_pub .*db=3/);

    const payload = Buffer.from(Array.from({ length: 70_000 }, (_, i) => i % 256));
    expect(await publisher.publish('c1', [Buffer.of(1, 2), payload])).toBe(1);
    expect(await publisher.publish('c2', [payload])).toBe(0);
    await expect.poll(() => received.length).toBe(1);
    expect(received[0]!.equals(Buffer.concat([Buffer.of(1, 2), payload]))).toBe(true);
  });

  it('fails at once while Redis is away, and says why', async () => {
    const redis = await startRedis();
    await redis.close();
    const downs: string[] = [];
    const connection = new RedisConnection({ url: redis.url, name: 'test', onReady: () => {}, onDown: (reason) => downs.push(reason) });
    cleanups.push(() => connection.disconnect());
    await expect(connection.open()).rejects.toThrow(/ECONNREFUSED/);
    await expect(connection.command(['PING'])).rejects.toThrow(/not ready/);
    expect(downs[0]).toMatch(/ECONNREFUSED/);
  });

  it('gives up on a Redis that stops answering, says why, and comes back when it answers again', async () => {
    const redis = await startRedis();
    cleanups.push(() => redis.close());
    const downs: string[] = [];
    let readies = 0;
    const connection = new RedisConnection({ url: redis.url, name: 'test', replyTimeoutMs: 300, onReady: () => readies++, onDown: (reason) => downs.push(reason) });
    cleanups.push(() => connection.disconnect());
    await connection.open();
    redis.child.kill('SIGSTOP');
    cleanups.push(() => redis.child.kill('SIGCONT'));
    await expect(connection.publish('c', [Buffer.from('x')])).rejects.toThrow(/no reply from Redis within 300 ms/);
    expect(downs[0]).toMatch(/no reply from Redis within 300 ms/);
    redis.child.kill('SIGCONT');
    await expect.poll(() => readies, { timeout: 5000 }).toBeGreaterThanOrEqual(2);
    expect(await connection.publish('c', [Buffer.from('x')])).toBe(0);
  });

  it('refuses a wrong password with Redis\'s own message', async () => {
    const redis = await startRedis(undefined, ['--requirepass', 's3cret']);
    cleanups.push(() => redis.close());
    const connection = new RedisConnection({ url: `redis://:wrong@127.0.0.1:${redis.port}`, name: 'test', onReady: () => {}, onDown: () => {} });
    cleanups.push(() => connection.disconnect());
    await expect(connection.open()).rejects.toThrow(/WRONGPASS|invalid password/);
  });
});
