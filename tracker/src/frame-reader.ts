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
import { EVENTS, type AnnounceRequest, type AnswerRequest, type ParseLimits, type RelayOffer } from './protocol.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const ID_LENGTH = 20;

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
      if (code !== 0xc2 && code !== 0xc3) return null;
      code = ((code & 0x1f) << 6) | (view.charCodeAt(++i) & 0x3f);
    }
    if (count === ID_LENGTH) return null;
    idCodes[count++] = code;
  }
  if (count !== ID_LENGTH) return null;
  return count === view.length ? view : String.fromCharCode.apply(null, idCodes);
}

/** Finds values by key in JSON that is known to be valid; positions are byte offsets. */
class ValidJsonScanner {
  bytes: Buffer = Buffer.alloc(0);
  /** Set by `members` when a key had an escape (its raw bytes may not be what it means). */
  escapedKey = false;

  /** The position after the string whose opening quote is at `pos`. */
  skipString(pos: number): number {
    const bytes = this.bytes;
    for (let quote = bytes.indexOf(QUOTE, pos + 1); ; quote = bytes.indexOf(QUOTE, quote + 1)) {
      let backslashes = 0;
      while (bytes[quote - 1 - backslashes] === BACKSLASH) backslashes++;
      if (backslashes % 2 === 0) return quote + 1;
    }
  }

  /** The position after the value starting at `pos` (no leading whitespace). */
  skipValue(pos: number): number {
    const bytes = this.bytes;
    const first = bytes[pos];
    if (first === QUOTE) return this.skipString(pos);
    if (first === OPEN_BRACE || first === OPEN_BRACKET) {
      let depth = 0;
      for (;;) {
        const byte = bytes[pos]!;
        if (byte === QUOTE) {
          pos = this.skipString(pos);
          continue;
        }
        pos++;
        if (byte === OPEN_BRACE || byte === OPEN_BRACKET) depth++;
        else if ((byte === CLOSE_BRACE || byte === CLOSE_BRACKET) && --depth === 0) return pos;
      }
    }
    // A number or a literal: runs until a delimiter or whitespace.
    while (pos < bytes.length) {
      const byte = bytes[pos]!;
      if (byte === COMMA || byte === CLOSE_BRACE || byte === CLOSE_BRACKET || byte <= 0x20) return pos;
      pos++;
    }
    return pos;
  }

  skipWhitespace(pos: number): number {
    const bytes = this.bytes;
    while (bytes[pos]! <= 0x20) pos++;
    return pos;
  }

  /**
   * The value of `key` in the object starting at `pos` (the last one, like JSON.parse), as
   * [start, end), written to `range`; false when absent. Sets `escapedKey` when the object has
   * a key with an escape.
   */
  find(pos: number, key: Uint8Array, range: { start: number; end: number }): boolean {
    const bytes = this.bytes;
    let found = false;
    pos = this.skipWhitespace(pos + 1);
    if (bytes[pos] === CLOSE_BRACE) return false;
    for (;;) {
      const keyStart = pos + 1;
      pos = this.skipString(pos);
      const keyEnd = pos - 1;
      let same = keyEnd - keyStart === key.length;
      for (let i = keyStart; i < keyEnd; i++) {
        const byte = bytes[i]!;
        if (byte === BACKSLASH) this.escapedKey = true;
        if (same && byte !== key[i - keyStart]) same = false;
      }
      pos = this.skipWhitespace(pos);
      pos = this.skipWhitespace(pos + 1); // the colon
      const valueStart = pos;
      pos = this.skipValue(pos);
      if (same) {
        range.start = valueStart;
        range.end = pos;
        found = true;
      }
      pos = this.skipWhitespace(pos);
      if (bytes[pos] === CLOSE_BRACE) return found;
      pos = this.skipWhitespace(pos + 1); // the comma
    }
  }

  /** The start of each element of the array starting at `pos`, up to `limit` of them. */
  elements(pos: number, limit: number, starts: number[]): void {
    const bytes = this.bytes;
    pos = this.skipWhitespace(pos + 1);
    if (bytes[pos] === CLOSE_BRACKET) return;
    while (starts.length < limit) {
      starts.push(pos);
      pos = this.skipWhitespace(this.skipValue(pos));
      if (bytes[pos] === CLOSE_BRACKET) return;
      pos = this.skipWhitespace(pos + 1);
    }
  }
}

const KEY_OFFERS = Buffer.from('offers');
const KEY_OFFER = Buffer.from('offer');
const KEY_ANSWER = Buffer.from('answer');

const scanner = new ValidJsonScanner();
const range = { start: 0, end: 0 };
const elementStarts: number[] = [];

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
  scanner.bytes = bytes;
  scanner.escapedKey = false;
  const top = scanner.skipWhitespace(0);

  if (message.answer !== undefined) {
    const toPeerId = binaryIdFromUtf8View(message.to_peer_id);
    const offerId = binaryIdFromUtf8View(message.offer_id);
    if (toPeerId === null || offerId === null || !isRecord(message.answer)) return null;
    if (!scanner.find(top, KEY_ANSWER, range) || scanner.escapedKey) return null;
    const answer: JsonSlice = { source: bytes, start: range.start, end: range.end };
    return { kind: 'answer', infoHash, peerId, toPeerId, offerId, answer };
  }

  const eventName = message.event === undefined ? 'update' : message.event;
  const event = typeof eventName === 'string' ? EVENTS[eventName] : undefined;
  if (!event) return null;
  // Number() of a string trims Unicode spaces, which the Latin-1 view does not show as such.
  if (typeof message.left === 'string' || typeof message.numwant === 'string') return null;
  let left = message.left === undefined ? Infinity : Number(message.left);
  if (Number.isNaN(left)) left = Infinity;

  const offers: RelayOffer[] = [];
  if (message.offers !== undefined && event !== 'stopped') {
    if (!Array.isArray(message.offers)) return null;
    const usable = Math.min(message.offers.length, limits.maxOffers);
    elementStarts.length = 0;
    if (!scanner.find(top, KEY_OFFERS, range)) return null;
    scanner.elements(range.start, usable, elementStarts);
    for (let i = 0; i < usable; i++) {
      const entry: unknown = message.offers[i];
      if (!isRecord(entry) || !isRecord(entry.offer)) return null;
      const offerId = binaryIdFromUtf8View(entry.offer_id);
      if (offerId === null || !scanner.find(elementStarts[i]!, KEY_OFFER, range)) return null;
      offers.push({ offer: { source: bytes, start: range.start, end: range.end }, offerId });
    }
    if (scanner.escapedKey) return null;
  }
  let numwant = offers.length;
  if (message.numwant !== undefined) {
    const wanted = Number(message.numwant);
    if (Number.isFinite(wanted) && wanted >= 0) numwant = Math.min(numwant, Math.floor(wanted));
  }
  return { kind: 'announce', infoHash, peerId, event, left, numwant, offers };
}
