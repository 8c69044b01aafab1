// The fast path for the two messages that make up nearly all traffic: an announce (with its
// offers) and an answer, read from the frame's UTF-8 bytes. Decoding a 5 KB frame full of SDP
// into a JS string and JSON.stringify per relayed offer cost most of the tracker's JavaScript
// time; here the offers and the answer are relayed as the bytes they came in.
//
// How: the bytes are viewed as a Latin-1 string (one char per byte: a copy, no decoding) and
// given to JSON.parse. That accepts exactly the frames that JSON.parse of the decoded text would
// accept, since every byte of a multi-byte UTF-8 sequence is >= 0x80 and can only sit inside a
// string. The small fields are taken from the parsed object (ids decoded from their UTF-8 bytes);
// the byte ranges of the offer and answer objects are then found by a scan that can trust the
// JSON to be valid, and so skips strings with memchr.
//
// Frames it does not fully understand (a scrape, invalid JSON, a bad field, an escaped key) get
// null, and the caller parses the decoded text with `parseRequest`, which decides and gives the
// exact failure reason. Whatever this reader accepts, `parseRequest` accepts with the same values.
//
// The bytes must be valid UTF-8: uWS closes a socket that sends a text frame that is not, and the
// server sends binary frames through `parseRequest`.

import type { JsonSlice } from './json-slice.js';
import { EVENTS, MAX_KEY_LENGTH, type AnnounceRequest, type AnswerRequest, type ParseLimits, type RelayOffer } from './protocol.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const ID_LENGTH = 20;
const EMPTY = Buffer.alloc(0);

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const idCodes: number[] = new Array<number>(ID_LENGTH).fill(0);

/**
 * The 20-character binary string whose UTF-8 bytes `view` holds one per char, or null (not a
 * string, wrong length, a code point above 255).
 */
function binaryIdFromUtf8View(view: unknown): string | null {
  if (typeof view !== 'string' || view.length < ID_LENGTH || view.length > 2 * ID_LENGTH) return null;
  let count = 0;
  for (let i = 0; i < view.length; i++) {
    let code = view.charCodeAt(i);
    if (code >= 0x80) {
      // Code points 0x80-0xff are the two-byte sequences C2 xx and C3 xx.
      // (An escaped \u00c3 before an escaped continuation would also pass here, but then the
      // id decodes to fewer than 20 chars and is declined.)
      const next = view.charCodeAt(++i);
      if ((code !== 0xc2 && code !== 0xc3) || !(next >= 0x80 && next <= 0xbf)) return null;
      code = ((code & 0x1f) << 6) | (next & 0x3f);
    }
    if (count === ID_LENGTH) return null;
    idCodes[count++] = code;
  }
  if (count !== ID_LENGTH) return null;
  return count === view.length ? view : String.fromCharCode.apply(null, idCodes);
}

/**
 * An ASCII `key` as read from the Latin-1 view, or null for anything else (then `parseRequest`
 * decides): a char >= 0x80 may be a UTF-8 byte or an escape's result, which the view cannot tell apart.
 */
function asciiKeyFromView(view: unknown): string | null {
  if (typeof view !== 'string' || view.length === 0 || view.length > MAX_KEY_LENGTH) return null;
  for (let i = 0; i < view.length; i++) if (view.charCodeAt(i) >= 0x80) return null;
  return view;
}

/** Where the relayed objects sit in a frame, as byte offsets [start, end). */
interface RelayedRanges {
  /** The `answer` value (the last one, like JSON.parse), or start -1. */
  answerStart: number;
  answerEnd: number;
  /** Per element of the `offers` array (up to a limit): its `offer` value, or -1 when it has none. */
  offerStarts: number[];
  offerEnds: number[];
  /**
   * The ranges cannot be trusted: a key of the objects read has an escape (its raw bytes may
   * not be what it means), or the frame is not shaped as expected.
   */
  unsure: boolean;
}

/**
 * Finds the relayed objects in one pass over JSON that JSON.parse has already accepted, so it
 * can skip strings by looking for their closing quote (memchr for long ones) without checking
 * anything else.
 */
class RelayedRangesScanner {
  private bytes: Buffer = EMPTY;
  readonly ranges: RelayedRanges = { answerStart: -1, answerEnd: -1, offerStarts: [], offerEnds: [], unsure: false };

  scan(bytes: Buffer, maxOffers: number): RelayedRanges {
    this.bytes = bytes;
    const ranges = this.ranges;
    ranges.answerStart = -1;
    ranges.offerStarts.length = 0;
    ranges.offerEnds.length = 0;
    ranges.unsure = false;
    this.members(this.skipWhitespace(0) + 1, -1, maxOffers);
    // uWS lends the frame's memory only for the duration of its callback.
    this.bytes = EMPTY;
    return ranges;
  }

  /** The `offers` array: each element's `offer` range, for the first `maxOffers` elements. */
  private offers(pos: number, maxOffers: number): number {
    const bytes = this.bytes;
    const { offerStarts, offerEnds } = this.ranges;
    // A later `offers` key replaces an earlier one, as in JSON.parse.
    offerStarts.length = 0;
    offerEnds.length = 0;
    pos = this.skipWhitespace(pos + 1);
    if (bytes[pos] === CLOSE_BRACKET) return pos + 1;
    for (;;) {
      if (offerStarts.length < maxOffers && bytes[pos] === OPEN_BRACE) {
        const index = offerStarts.length;
        offerStarts.push(-1);
        offerEnds.push(-1);
        pos = this.members(pos + 1, index, 0);
      } else {
        if (offerStarts.length < maxOffers) {
          offerStarts.push(-1);
          offerEnds.push(-1);
        }
        pos = this.skipValue(pos);
      }
      pos = this.skipWhitespace(pos);
      if (bytes[pos] === CLOSE_BRACKET) return pos + 1;
      if (bytes[pos] !== COMMA) return this.giveUp();
      pos = this.skipWhitespace(pos + 1);
    }
  }

  /**
   * Walks the members of the object whose first member (or closing brace) is at or after `pos`:
   * the whole frame (`offerIndex` -1), where it reads `answer` and `offers`, or an element of
   * `offers`, where it reads `offer`. Returns the position after the closing brace.
   */
  private members(pos: number, offerIndex: number, maxOffers: number): number {
    const ranges = this.ranges;
    const bytes = this.bytes;
    pos = this.skipWhitespace(pos);
    if (bytes[pos] === CLOSE_BRACE) return pos + 1;
    for (;;) {
      if (bytes[pos] !== QUOTE) return this.giveUp();
      const keyStart = pos + 1;
      pos = this.skipString(pos);
      const key = this.keyOf(keyStart, pos - 1);
      pos = this.skipWhitespace(this.skipWhitespace(pos) + 1); // past the colon
      const valueStart = pos;
      if (offerIndex < 0 && key === Key.Offers && bytes[pos] === OPEN_BRACKET) {
        pos = this.offers(pos, maxOffers);
      } else {
        pos = this.skipValue(pos);
        if (offerIndex < 0 && key === Key.Answer) {
          ranges.answerStart = valueStart;
          ranges.answerEnd = pos;
        } else if (offerIndex >= 0 && key === Key.Offer) {
          ranges.offerStarts[offerIndex] = valueStart;
          ranges.offerEnds[offerIndex] = pos;
        }
      }
      pos = this.skipWhitespace(pos);
      if (bytes[pos] === CLOSE_BRACE) return pos + 1;
      if (bytes[pos] !== COMMA) return this.giveUp();
      pos = this.skipWhitespace(pos + 1); // past the comma
    }
  }

  private keyOf(start: number, end: number): Key {
    const bytes = this.bytes;
    for (let i = start; i < end; i++) {
      if (bytes[i] === BACKSLASH) {
        this.ranges.unsure = true;
        return Key.Other;
      }
    }
    const length = end - start;
    if (length === 5 || length === 6) {
      for (const [name, key] of KEY_NAMES) {
        if (name.length !== length) continue;
        let same = true;
        for (let i = 0; i < length && same; i++) same = bytes[start + i] === name[i];
        if (same) return key;
      }
    }
    return Key.Other;
  }

  /** Marks the scan unsure and returns the end of the frame, which ends every loop. */
  private giveUp(): number {
    this.ranges.unsure = true;
    return this.bytes.length;
  }

  /** The position after the string whose opening quote is at `pos`. */
  private skipString(pos: number): number {
    const bytes = this.bytes;
    // Keys and ids are short: a loop beats a native call; long strings (SDP) go to memchr.
    const shortEnd = Math.min(bytes.length, pos + 33);
    let i = pos + 1;
    for (; i < shortEnd; i++) {
      const byte = bytes[i];
      if (byte === QUOTE) return i + 1;
      if (byte === BACKSLASH) i++;
    }
    for (let quote = bytes.indexOf(QUOTE, i); ; quote = bytes.indexOf(QUOTE, quote + 1)) {
      if (quote < 0) return bytes.length;
      let backslashes = 0;
      while (bytes[quote - 1 - backslashes] === BACKSLASH) backslashes++;
      if (backslashes % 2 === 0) return quote + 1;
    }
  }

  /** The position after the value starting at `pos` (no leading whitespace). */
  private skipValue(pos: number): number {
    const bytes = this.bytes;
    const first = bytes[pos];
    if (first === QUOTE) return this.skipString(pos);
    if (first === OPEN_BRACE || first === OPEN_BRACKET) {
      let depth = 0;
      while (pos < bytes.length) {
        const byte = bytes[pos]!;
        if (byte === QUOTE) {
          pos = this.skipString(pos);
          continue;
        }
        pos++;
        if (byte === OPEN_BRACE || byte === OPEN_BRACKET) depth++;
        else if ((byte === CLOSE_BRACE || byte === CLOSE_BRACKET) && --depth === 0) return pos;
      }
      return pos;
    }
    // A number or a literal: runs until a delimiter or whitespace.
    while (pos < bytes.length) {
      const byte = bytes[pos]!;
      if (byte === COMMA || byte === CLOSE_BRACE || byte === CLOSE_BRACKET || byte <= 0x20) return pos;
      pos++;
    }
    return pos;
  }

  private skipWhitespace(pos: number): number {
    const bytes = this.bytes;
    while (bytes[pos]! <= 0x20) pos++;
    return pos;
  }
}

const enum Key {
  Other,
  Offers,
  Offer,
  Answer,
}
const KEY_NAMES: [Buffer, Key][] = [
  [Buffer.from('offers'), Key.Offers],
  [Buffer.from('offer'), Key.Offer],
  [Buffer.from('answer'), Key.Answer],
];
const scanner = new RelayedRangesScanner();

/**
 * An announce or answer read from a text frame's UTF-8 bytes, or null when the frame is anything
 * else or anything unusual (then `parseRequest` on the decoded text decides).
 */
export function readFrame(frame: Uint8Array, limits: ParseLimits): AnnounceRequest | AnswerRequest | null {
  const bytes = Buffer.isBuffer(frame) ? frame : Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength);
  let message: unknown;
  try {
    message = JSON.parse(bytes.toString('latin1'));
  } catch {
    return null;
  }
  if (!isRecord(message) || message.action !== 'announce') return null;
  const infoHash = binaryIdFromUtf8View(message.info_hash);
  const peerId = binaryIdFromUtf8View(message.peer_id);
  if (infoHash === null || peerId === null) return null;
  const isAnswer = message.answer !== undefined;
  const ranges = scanner.scan(bytes, isAnswer ? 0 : limits.maxOffers);
  if (ranges.unsure) return null;

  if (isAnswer) {
    const toPeerId = binaryIdFromUtf8View(message.to_peer_id);
    const offerId = binaryIdFromUtf8View(message.offer_id);
    if (toPeerId === null || offerId === null || !isRecord(message.answer)) return null;
    if (ranges.answerStart < 0) return null;
    const answer: JsonSlice = { source: bytes, start: ranges.answerStart, end: ranges.answerEnd };
    return { kind: 'answer', infoHash, peerId, toPeerId, offerId, answer };
  }

  const eventName = message.event === undefined ? 'update' : message.event;
  const event = typeof eventName === 'string' ? EVENTS[eventName] : undefined;
  if (!event) return null;
  // Number() of a string trims Unicode spaces, which the Latin-1 view does not show as such.
  if (typeof message.left === 'string' || typeof message.numwant === 'string') return null;
  let left = message.left === undefined ? Infinity : Number(message.left);
  if (Number.isNaN(left)) left = Infinity;
  let key: string | null = null;
  if (message.key !== undefined && (key = asciiKeyFromView(message.key)) === null) return null;

  const offers: RelayOffer[] = [];
  if (message.offers !== undefined && event !== 'stopped') {
    if (!Array.isArray(message.offers)) return null;
    const usable = Math.min(message.offers.length, limits.maxOffers);
    if (ranges.offerStarts.length < usable) return null;
    for (let i = 0; i < usable; i++) {
      const entry: unknown = message.offers[i];
      if (!isRecord(entry) || !isRecord(entry.offer)) return null;
      const offerId = binaryIdFromUtf8View(entry.offer_id);
      const start = ranges.offerStarts[i]!;
      if (offerId === null || start < 0) return null;
      offers.push({ offer: { source: bytes, start, end: ranges.offerEnds[i]! }, offerId });
    }
  }
  let numwant = offers.length;
  if (message.numwant !== undefined) {
    const wanted = Number(message.numwant);
    if (Number.isFinite(wanted) && wanted >= 0) numwant = Math.min(numwant, Math.floor(wanted));
  }
  return { kind: 'announce', infoHash, peerId, event, left, key, numwant, offers };
}
