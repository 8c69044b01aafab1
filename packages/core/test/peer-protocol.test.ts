import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CHUNK_BYTES, MAX_MAP_SEGMENTS, MAX_MESSAGE_BYTES, SegmentState, availabilityMap, decode, encode, encodeDataInto, type PeerMessage } from '../src/wire/peer-protocol.js';

const fromHex = (hex: string) => Uint8Array.from(hex.replace(/\s+/g, '').match(/../g) ?? [], (byte) => parseInt(byte, 16));
const toHex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

function vectors(): { name: string; message: PeerMessage; hex: string }[] {
  const text = readFileSync(new URL('../PROTOCOL.md', import.meta.url), 'utf8');
  const rows = [...text.matchAll(/^\| ([^|]+) \| `(\{.*\})` \| `([0-9a-f ]+)` \|$/gm)];
  return rows.map(([, name, json, hex]) => {
    const fields = JSON.parse(json!) as Record<string, unknown>;
    if (typeof fields.payload === 'string') fields.payload = fromHex(fields.payload);
    return { name: name!.trim(), message: fields as unknown as PeerMessage, hex: hex!.replace(/ /g, '') };
  });
}

describe('peer protocol', () => {
  it('matches every test vector in PROTOCOL.md, both ways', () => {
    const all = vectors();
    expect(all.map((vector) => vector.message.type)).toEqual(
      expect.arrayContaining(['handshake', 'availability', 'have', 'request', 'data', 'done', 'absent', 'busy', 'cancel', 'ping', 'pong', 'progress']),
    );
    for (const { name, message, hex } of all) {
      expect(toHex(encode(message)), name).toBe(hex);
      const decoded = decode(fromHex(hex));
      expect(decoded, name).toEqual({ ok: true, message });
    }
  });

  it('round-trips a full 16 KiB chunk and a large availability map', () => {
    const payload = Uint8Array.from({ length: CHUNK_BYTES }, (_, i) => (i * 7) & 0xff);
    const data: PeerMessage = { type: 'data', sequence: 0xffff_fffe, offset: 3 * CHUNK_BYTES, totalBytes: 4 * CHUNK_BYTES, payload };
    const bytes = encode(data);
    expect(bytes.length).toBe(MAX_MESSAGE_BYTES);
    expect(decode(bytes)).toEqual({ ok: true, message: data });
    const states = Array.from({ length: 4096 }, (_, i) => (i % 3) as 0 | 1 | 2);
    const map: PeerMessage = { type: 'availability', firstSequence: 123_456, states };
    expect(decode(encode(map))).toEqual({ ok: true, message: map });
  });

  it('writes data messages one after another into a shared buffer, each the same bytes encode() gives', () => {
    const payloads = [Uint8Array.from({ length: CHUNK_BYTES }, (_, i) => i & 0xff), Uint8Array.from([1, 2, 3])];
    const wire = new Uint8Array(2 * 13 + CHUNK_BYTES + 3);
    let at = 0;
    payloads.forEach((payload, i) => {
      const message = encodeDataInto(wire.subarray(at), 7, i * CHUNK_BYTES, CHUNK_BYTES + 3, payload);
      expect(toHex(message)).toBe(toHex(encode({ type: 'data', sequence: 7, offset: i * CHUNK_BYTES, totalBytes: CHUNK_BYTES + 3, payload })));
      expect(decode(message)).toMatchObject({ ok: true, message: { type: 'data', offset: i * CHUNK_BYTES } });
      at += message.length;
    });
    expect(at).toBe(wire.length);
  });

  it('decodes a message that is a view into a larger buffer', () => {
    const backing = new Uint8Array(30);
    backing.set(fromHex('04 00 00 03 f2 00 00 40 00 00 00 80 00 00 00 09 c4'), 7);
    expect(decode(backing.subarray(7, 24))).toEqual({ ok: true, message: { type: 'request', sequence: 1010, start: 16384, end: 32768, withinMs: 2500 } });
  });

  const malformed: [string, string, Uint8Array][] = [
    ['EMPTY', 'empty message', new Uint8Array(0)],
    ['TOO_LARGE', 'oversized message', new Uint8Array(MAX_MESSAGE_BYTES + 1).fill(5)],
    ['UNKNOWN_TYPE', 'unknown type', fromHex('7f 00 00 00 01')],
    ['UNKNOWN_TYPE', 'type zero', fromHex('00')],
    ['BAD_LENGTH', 'short handshake', fromHex('01 53 48 01')],
    ['BAD_MAGIC', 'handshake without magic', fromHex('01 00 00 01 01')],
    ['BAD_VALUE', 'handshake with unknown flags', fromHex('01 53 48 01 02')],
    ['BAD_LENGTH', 'truncated availability header', fromHex('02 00 00 03')],
    ['BAD_LENGTH', 'availability shorter than its count', fromHex('02 00 00 03 e8 00 0a c8 00 10')],
    ['BAD_LENGTH', 'availability with trailing bytes', fromHex('02 00 00 03 e8 00 0a c8 00 10 40 00')],
    ['TOO_LARGE', 'availability count over 4096', fromHex('02 00 00 00 00 10 01')],
    ['BAD_VALUE', 'segment both has and fetching', fromHex('02 00 00 00 00 00 01 80 80')],
    ['BAD_VALUE', 'availability padding bits set', fromHex('02 00 00 00 00 00 01 40 00')],
    ['BAD_VALUE', 'availability past sequence 2^32-1', fromHex('02 ff ff ff ff 00 02 00 00')],
    ['BAD_LENGTH', 'have too long', fromHex('03 00 00 00 01 01 00')],
    ['BAD_VALUE', 'have with unknown state', fromHex('03 00 00 00 01 03')],
    ['BAD_LENGTH', 'request too short', fromHex('04 00 00 00 01 00 00 00 00 00 00 40 00')],
    ['BAD_LENGTH', 'request of version 3 (an offset only)', fromHex('04 00 00 00 01 00 00 40 00')],
    ['BAD_VALUE', 'request start beyond any segment', fromHex('04 00 00 00 01 7f ff ff ff ff ff ff ff 00 00 00 00')],
    ['BAD_VALUE', 'request ending at its start', fromHex('04 00 00 00 01 00 00 40 00 00 00 40 00 00 00 00 00')],
    ['BAD_VALUE', 'request ending past any segment', fromHex('04 00 00 00 01 00 00 00 00 7f 00 00 00 00 00 00 00')],
    ['BAD_LENGTH', 'data without payload', fromHex('05 00 00 00 01 00 00 00 00 00 00 00 10')],
    ['BAD_VALUE', 'data chunk past the segment end', fromHex('05 00 00 00 01 00 00 00 0f 00 00 00 10 aa bb')],
    ['TOO_LARGE', 'data claiming a huge segment', fromHex('05 00 00 00 01 00 00 00 00 7f 00 00 00 aa')],
    ['BAD_LENGTH', 'done too short', fromHex('06 00 00 00 01')],
    ['TOO_LARGE', 'done claiming a huge segment', fromHex('06 00 00 00 01 7f 00 00 00')],
    ['BAD_LENGTH', 'absent too long', fromHex('07 00 00 00 01 00')],
    ['BAD_LENGTH', 'busy too short', fromHex('08 00 00 01')],
    ['BAD_LENGTH', 'busy of version 3 (no wait)', fromHex('08 00 00 00 01')],
    ['BAD_LENGTH', 'progress too short', fromHex('0c 00 00 00 01 00 00 00 10')],
    ['BAD_VALUE', 'progress holding more than the segment', fromHex('0c 00 00 00 01 00 00 00 11 00 00 00 10')],
    ['BAD_VALUE', 'progress of an empty segment', fromHex('0c 00 00 00 01 00 00 00 00 00 00 00 00')],
    ['BAD_LENGTH', 'cancel too long', fromHex('09 00 00 00 01 00')],
  ];
  it.each(malformed)('rejects %s: %s', (code, _name, bytes) => {
    const result = decode(bytes);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.code).toBe(code);
  });

  it('never throws on random input', () => {
    let seed = 42;
    const random = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) & 0xff;
    for (let i = 0; i < 5000; i++) {
      const bytes = Uint8Array.from({ length: random() % 40 }, random);
      if (bytes.length > 0) bytes[0] = (bytes[0]! % 13);
      expect(() => decode(bytes)).not.toThrow();
    }
  });
});

describe('availability map for a new peer', () => {
  it('marks held and fetching segments from the oldest one, "has" winning over "fetching"', () => {
    expect(availabilityMap([5, 7], [8, 7])).toEqual([5, [SegmentState.has, SegmentState.none, SegmentState.has, SegmentState.fetching]]);
    expect(availabilityMap([], [])).toEqual([0, []]);
  });

  it('keeps only the newest MAX_MAP_SEGMENTS segments', () => {
    const [first, states] = availabilityMap([0, 10_000], []);
    expect(first).toBe(10_000 - MAX_MAP_SEGMENTS + 1);
    expect(states).toHaveLength(MAX_MAP_SEGMENTS);
    expect(states[states.length - 1]).toBe(SegmentState.has);
  });
});
