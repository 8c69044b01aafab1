// Shoal's peer wire protocol, version 4: one binary message per data-channel message.
// The byte layouts are documented in PROTOCOL.md, whose test vectors test/peer-protocol.test.ts
// checks. decode() never throws: a malformed message is a typed error the peer session turns
// into a ban.

export const PROTOCOL_VERSION = 4;
/** Data chunk payload size: the largest message every browser's data channel carries. */
export const CHUNK_BYTES = 16 * 1024;
/** Largest segment a peer may offer (a 4K segment of several seconds fits). */
export const MAX_SEGMENT_BYTES = 64 * 1024 * 1024;
/** Most segments one availability map may describe. */
export const MAX_MAP_SEGMENTS = 4096;
export const DATA_HEADER_BYTES = 13;
export const MAX_MESSAGE_BYTES = DATA_HEADER_BYTES + CHUNK_BYTES;

/**
 * The most payload a data message may carry on a channel whose messages are at most
 * `maxMessageBytes` (undefined: not known): CHUNK_BYTES, or less where the channel carries less.
 */
export function dataPayloadLimit(maxMessageBytes: number | undefined): number {
  if (maxMessageBytes === undefined) return CHUNK_BYTES;
  return Math.max(1, Math.min(CHUNK_BYTES, Math.floor(maxMessageBytes) - DATA_HEADER_BYTES));
}

export const MessageType = {
  handshake: 0x01,
  availability: 0x02,
  have: 0x03,
  request: 0x04,
  data: 0x05,
  done: 0x06,
  absent: 0x07,
  busy: 0x08,
  cancel: 0x09,
  ping: 0x0a,
  pong: 0x0b,
  progress: 0x0c,
} as const;

/** A request's `end` that means the segment's end (the requester does not know its size yet). */
export const TO_SEGMENT_END = 0xffff_ffff;
/** A request's `withinMs` when the requester has no deadline (prefetch far ahead). */
export const NO_DEADLINE = 0xffff_ffff;
/** A busy's `waitMs` when the sender does not serve at all now (its own playback needs its uplink, or upload is off). */
export const NOT_SERVING = 0xffff_ffff;

/** A segment's state in a peer's availability. */
export const SegmentState = { none: 0, has: 1, fetching: 2 } as const;
export type SegmentStateValue = (typeof SegmentState)[keyof typeof SegmentState];

export type PeerMessage =
  | { type: 'handshake'; version: number; uploads: boolean }
  /** Segments firstSequence .. firstSequence + states.length - 1; every other segment: none. */
  | { type: 'availability'; firstSequence: number; states: SegmentStateValue[] }
  | { type: 'have'; sequence: number; state: SegmentStateValue }
  /**
   * Bytes [start, end) of the segment (end TO_SEGMENT_END: to its end), needed within `withinMs`
   * (NO_DEADLINE: not needed by any time): the sender accepts only what it can deliver by then.
   */
  | { type: 'request'; sequence: number; start: number; end: number; withinMs: number }
  | { type: 'data'; sequence: number; offset: number; totalBytes: number; payload: Uint8Array }
  | { type: 'done'; sequence: number; totalBytes: number }
  | { type: 'absent'; sequence: number }
  /** The request cannot be met in time: the sender could start on it after `waitMs` (NOT_SERVING: it does not serve now). */
  | { type: 'busy'; sequence: number; waitMs: number }
  | { type: 'cancel'; sequence: number }
  /**
   * Sender's clock (ms, mod 2^32) and upload state: the pace a new request would get (bytes/s,
   * 0 when it does not serve now, PACE_UNMEASURED before it has found its uplink's rate) and the
   * payload bytes queued ahead of it.
   */
  | { type: 'ping'; sentMs: number; paceBytesPerS: number; backlogBytes: number }
  /**
   * The ping's sentMs echoed, the receiver's clock when it arrived, the receiver's upload state, and
   * every byte the receiver got from the pinger on this channel so far (mod 2^32): what the
   * pinger's uplink really delivered.
   */
  | { type: 'pong'; echoMs: number; receivedMs: number; paceBytesPerS: number; backlogBytes: number; deliveredBytes: number }
  /** The sender holds bytes [0, heldBytes) of a segment of totalBytes it is still receiving: they may be asked for (a relay). */
  | { type: 'progress'; sequence: number; heldBytes: number; totalBytes: number };

/** A ping's or pong's pace before the sender has measured its uplink: the requester judges the rate itself. */
export const PACE_UNMEASURED = 0xffff_ffff;

/** A pace as said on the wire, or undefined when it is PACE_UNMEASURED. */
export const measuredPace = (paceBytesPerS: number | undefined): number | undefined => (paceBytesPerS === PACE_UNMEASURED ? undefined : paceBytesPerS);

export type DecodeErrorCode = 'EMPTY' | 'TOO_LARGE' | 'UNKNOWN_TYPE' | 'BAD_LENGTH' | 'BAD_MAGIC' | 'BAD_VALUE';
export type DecodeResult =
  | { ok: true; message: PeerMessage }
  | { ok: false; code: DecodeErrorCode; detail: string };

const MAGIC_0 = 0x53; // 'S'
const MAGIC_1 = 0x48; // 'H'

/**
 * A message of its type byte, big-endian u32 fields and `tailBytes` more. Written byte by byte, not
 * through a DataView: a small Uint8Array lives in V8's heap until its .buffer is asked for, which
 * moves it out (the simulator at 1,000 viewers spent a third of its time there, issue 41).
 */
function words(type: number, values: number[], tailBytes = 0): Uint8Array {
  const bytes = new Uint8Array(1 + 4 * values.length + tailBytes);
  bytes[0] = type;
  values.forEach((value, i) => putUint32(bytes, 1 + 4 * i, value));
  return bytes;
}

/** DataView.setUint32's bytes (big-endian, the value taken mod 2^32), without a DataView. */
function putUint32(bytes: Uint8Array, at: number, value: number): void {
  bytes[at] = value >>> 24;
  bytes[at + 1] = value >>> 16;
  bytes[at + 2] = value >>> 8;
  bytes[at + 3] = value;
}

/** DataView.getUint32's reading (big-endian), without a DataView. */
function uint32(bytes: Uint8Array, at: number): number {
  return ((bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!) >>> 0;
}

/**
 * Writes a data message at the start of `target` and returns the view of it, so that an upload
 * can write all its chunks into one buffer rather than allocate (and zero) one per chunk.
 */
export function encodeDataInto(target: Uint8Array, sequence: number, offset: number, totalBytes: number, payload: Uint8Array): Uint8Array {
  const bytes = target.subarray(0, DATA_HEADER_BYTES + payload.length);
  bytes[0] = MessageType.data;
  putUint32(bytes, 1, sequence);
  putUint32(bytes, 5, offset);
  putUint32(bytes, 9, totalBytes);
  bytes.set(payload, DATA_HEADER_BYTES);
  return bytes;
}

export function encode(message: PeerMessage): Uint8Array {
  switch (message.type) {
    case 'handshake':
      return Uint8Array.of(MessageType.handshake, MAGIC_0, MAGIC_1, message.version, message.uploads ? 1 : 0);
    case 'availability': {
      const count = message.states.length;
      const bitmapBytes = (count + 7) >> 3;
      const bytes = words(MessageType.availability, [message.firstSequence], 2 + 2 * bitmapBytes);
      bytes[5] = count >> 8;
      bytes[6] = count;
      message.states.forEach((state, i) => {
        if (state === SegmentState.has) bytes[7 + (i >> 3)]! |= 0x80 >> (i & 7);
        if (state === SegmentState.fetching) bytes[7 + bitmapBytes + (i >> 3)]! |= 0x80 >> (i & 7);
      });
      return bytes;
    }
    case 'have': {
      const bytes = words(MessageType.have, [message.sequence], 1);
      bytes[5] = message.state;
      return bytes;
    }
    case 'request':
      return words(MessageType.request, [message.sequence, message.start, message.end, message.withinMs]);
    case 'data':
      return encodeDataInto(new Uint8Array(DATA_HEADER_BYTES + message.payload.length), message.sequence, message.offset, message.totalBytes, message.payload);
    case 'done':
      return words(MessageType.done, [message.sequence, message.totalBytes]);
    case 'absent':
      return words(MessageType.absent, [message.sequence]);
    case 'busy':
      return words(MessageType.busy, [message.sequence, message.waitMs]);
    case 'progress':
      return words(MessageType.progress, [message.sequence, message.heldBytes, message.totalBytes]);
    case 'cancel':
      return words(MessageType.cancel, [message.sequence]);
    case 'ping':
      return words(MessageType.ping, [message.sentMs, message.paceBytesPerS, message.backlogBytes]);
    case 'pong':
      return words(MessageType.pong, [message.echoMs, message.receivedMs, message.paceBytesPerS, message.backlogBytes, message.deliveredBytes]);
  }
}

/** A clock reading as the protocol carries it: whole ms, mod 2^32. */
export function wireMs(nowMs: number): number {
  return Math.floor(nowMs) >>> 0;
}

/** `later - earlier` of two wire clock readings, across a wrap: a signed 32-bit difference. */
export function wireMsDiff(later: number, earlier: number): number {
  return (later - earlier) | 0;
}

const fail = (code: DecodeErrorCode, detail: string): DecodeResult => ({ ok: false, code, detail });

/** Decodes one message. Never throws; anything not exactly as PROTOCOL.md describes is an error result. */
export function decode(bytes: Uint8Array): DecodeResult {
  if (!(bytes instanceof Uint8Array) || bytes.length === 0) return fail('EMPTY', 'empty message');
  if (bytes.length > MAX_MESSAGE_BYTES) return fail('TOO_LARGE', `${bytes.length} bytes > ${MAX_MESSAGE_BYTES}`);
  const type = bytes[0];
  const exactly = (length: number) =>
    bytes.length === length ? undefined : fail('BAD_LENGTH', `type 0x0${type!.toString(16)} needs ${length} bytes, got ${bytes.length}`);
  switch (type) {
    case MessageType.handshake: {
      const bad = exactly(5);
      if (bad) return bad;
      if (bytes[1] !== MAGIC_0 || bytes[2] !== MAGIC_1) return fail('BAD_MAGIC', 'handshake does not start with "SH"');
      if (bytes[4]! > 1) return fail('BAD_VALUE', `handshake flags ${bytes[4]}`);
      return { ok: true, message: { type: 'handshake', version: bytes[3]!, uploads: bytes[4] === 1 } };
    }
    case MessageType.availability:
      return decodeAvailability(bytes);
    case MessageType.have: {
      const bad = exactly(6);
      if (bad) return bad;
      const state = bytes[5]!;
      if (state > SegmentState.fetching) return fail('BAD_VALUE', `segment state ${state}`);
      return { ok: true, message: { type: 'have', sequence: uint32(bytes, 1), state: state as SegmentStateValue } };
    }
    case MessageType.request: {
      const bad = exactly(17);
      if (bad) return bad;
      const start = uint32(bytes, 5);
      const end = uint32(bytes, 9);
      if (start >= MAX_SEGMENT_BYTES) return fail('BAD_VALUE', `request start ${start}`);
      if (end !== TO_SEGMENT_END && (end <= start || end > MAX_SEGMENT_BYTES)) return fail('BAD_VALUE', `request range ${start}-${end}`);
      return { ok: true, message: { type: 'request', sequence: uint32(bytes, 1), start, end, withinMs: uint32(bytes, 13) } };
    }
    case MessageType.data: {
      if (bytes.length <= DATA_HEADER_BYTES) return fail('BAD_LENGTH', `data needs > ${DATA_HEADER_BYTES} bytes, got ${bytes.length}`);
      const offset = uint32(bytes, 5);
      const totalBytes = uint32(bytes, 9);
      const payload = bytes.subarray(DATA_HEADER_BYTES);
      if (totalBytes > MAX_SEGMENT_BYTES) return fail('TOO_LARGE', `segment of ${totalBytes} bytes > ${MAX_SEGMENT_BYTES}`);
      if (offset + payload.length > totalBytes) return fail('BAD_VALUE', `chunk ${offset}+${payload.length} past segment end ${totalBytes}`);
      return { ok: true, message: { type: 'data', sequence: uint32(bytes, 1), offset, totalBytes, payload } };
    }
    case MessageType.done: {
      const bad = exactly(9);
      if (bad) return bad;
      const totalBytes = uint32(bytes, 5);
      if (totalBytes > MAX_SEGMENT_BYTES) return fail('TOO_LARGE', `segment of ${totalBytes} bytes > ${MAX_SEGMENT_BYTES}`);
      return { ok: true, message: { type: 'done', sequence: uint32(bytes, 1), totalBytes } };
    }
    case MessageType.absent:
    case MessageType.cancel: {
      const bad = exactly(5);
      if (bad) return bad;
      return { ok: true, message: { type: type === MessageType.absent ? 'absent' : 'cancel', sequence: uint32(bytes, 1) } };
    }
    case MessageType.busy: {
      const bad = exactly(9);
      if (bad) return bad;
      return { ok: true, message: { type: 'busy', sequence: uint32(bytes, 1), waitMs: uint32(bytes, 5) } };
    }
    case MessageType.progress: {
      const bad = exactly(13);
      if (bad) return bad;
      const heldBytes = uint32(bytes, 5);
      const totalBytes = uint32(bytes, 9);
      if (totalBytes === 0 || totalBytes > MAX_SEGMENT_BYTES || heldBytes > totalBytes) return fail('BAD_VALUE', `progress ${heldBytes} of ${totalBytes}`);
      return { ok: true, message: { type: 'progress', sequence: uint32(bytes, 1), heldBytes, totalBytes } };
    }
    case MessageType.ping: {
      const bad = exactly(13);
      if (bad) return bad;
      return { ok: true, message: { type: 'ping', sentMs: uint32(bytes, 1), paceBytesPerS: uint32(bytes, 5), backlogBytes: uint32(bytes, 9) } };
    }
    case MessageType.pong: {
      const bad = exactly(21);
      if (bad) return bad;
      return {
        ok: true,
        message: {
          type: 'pong', echoMs: uint32(bytes, 1), receivedMs: uint32(bytes, 5), paceBytesPerS: uint32(bytes, 9), backlogBytes: uint32(bytes, 13),
          deliveredBytes: uint32(bytes, 17),
        },
      };
    }
    default:
      return fail('UNKNOWN_TYPE', `message type ${type}`);
  }
}

/** An availability message: first sequence, count, the *has* and the *fetching* bitmaps. */
function decodeAvailability(bytes: Uint8Array): DecodeResult {
  if (bytes.length < 7) return fail('BAD_LENGTH', `availability needs >= 7 bytes, got ${bytes.length}`);
  const count = (bytes[5]! << 8) | bytes[6]!;
  if (count > MAX_MAP_SEGMENTS) return fail('TOO_LARGE', `availability of ${count} segments > ${MAX_MAP_SEGMENTS}`);
  const bitmapBytes = (count + 7) >> 3;
  if (bytes.length !== 7 + 2 * bitmapBytes) return fail('BAD_LENGTH', `availability of ${count} needs ${7 + 2 * bitmapBytes} bytes, got ${bytes.length}`);
  const firstSequence = uint32(bytes, 1);
  if (firstSequence + count > 0xffff_ffff + 1) return fail('BAD_VALUE', 'availability runs past sequence 2^32-1');
  const states: SegmentStateValue[] = new Array(count);
  for (let i = 0; i < count; i++) {
    const mask = 0x80 >> (i & 7);
    const has = (bytes[7 + (i >> 3)]! & mask) !== 0;
    const fetching = (bytes[7 + bitmapBytes + (i >> 3)]! & mask) !== 0;
    if (has && fetching) return fail('BAD_VALUE', `segment ${firstSequence + i} both has and fetching`);
    states[i] = has ? SegmentState.has : fetching ? SegmentState.fetching : SegmentState.none;
  }
  const padMask = (0xff >> (count & 7)) & (count & 7 ? 0xff : 0);
  if (padMask && ((bytes[6 + bitmapBytes]! & padMask) || (bytes[6 + 2 * bitmapBytes]! & padMask))) {
    return fail('BAD_VALUE', 'availability padding bits set');
  }
  return { ok: true, message: { type: 'availability', firstSequence, states } };
}

/**
 * The availability map a new peer is sent: the segments we have and those we fetch, as
 * [first sequence, state per sequence], at most MAX_MAP_SEGMENTS ending at the newest.
 */
export function availabilityMap(has: readonly number[], fetching: readonly number[]): [number, SegmentStateValue[]] {
  const all = [...has, ...fetching];
  if (all.length === 0) return [0, []];
  const last = Math.max(...all);
  const first = Math.max(Math.min(...all), last - MAX_MAP_SEGMENTS + 1);
  const states: SegmentStateValue[] = new Array<SegmentStateValue>(last - first + 1).fill(SegmentState.none);
  for (const sequence of fetching) if (sequence >= first) states[sequence - first] = SegmentState.fetching;
  for (const sequence of has) if (sequence >= first) states[sequence - first] = SegmentState.has;
  return [first, states];
}

/** Our upload state as pings carry it (32-bit fields); a pace of 0 says we do not serve. */
export function wireUploadState(advertised: { paceBytesPerS: number; backlogBytes: number }, serving: boolean): { paceBytesPerS: number; backlogBytes: number } {
  return { paceBytesPerS: serving ? Math.min(advertised.paceBytesPerS, PACE_UNMEASURED) : 0, backlogBytes: Math.min(advertised.backlogBytes, 0xffff_ffff) };
}
