// Builds outgoing JSON text frames as UTF-8 bytes from constant ASCII parts, numbers and slices
// of received frames, in one reused buffer. The socket copies a frame when it is sent, so the
// buffer is free again as soon as `send` returns.

import type { JsonSlice } from './json-slice.js';

const encoder = new TextEncoder();
const HEX_DIGITS = encoder.encode('0123456789abcdef');
/** JSON.stringify's two-character escapes (\b \t \n \f \r) by control code. */
const SHORT_ESCAPES: Record<number, number> = { 0x08: 0x62, 0x09: 0x74, 0x0a: 0x6e, 0x0c: 0x66, 0x0d: 0x72 };

/** Pre-encodes a constant part of a frame (ASCII JSON syntax and keys). */
export function framePart(ascii: string): Uint8Array {
  return encoder.encode(ascii);
}

export class FrameWriter {
  private buffer = new Uint8Array(16 * 1024);
  private length = 0;

  /** Starts a new frame, discarding the previous one. */
  begin(): this {
    this.length = 0;
    return this;
  }

  part(bytes: Uint8Array): this {
    this.reserve(bytes.length);
    this.buffer.set(bytes, this.length);
    this.length += bytes.length;
    return this;
  }

  slice(value: JsonSlice): this {
    const size = value.end - value.start;
    this.reserve(size);
    this.buffer.set(value.source.subarray(value.start, value.end), this.length);
    this.length += size;
    return this;
  }

  /**
   * A binary id (code points 0-255) as a JSON string, escaped the way JSON.stringify does it,
   * in UTF-8.
   */
  binaryId(id: string): this {
    this.reserve(2 + 6 * id.length);
    const buffer = this.buffer;
    let at = this.length;
    buffer[at++] = 0x22;
    for (let i = 0; i < id.length; i++) {
      const code = id.charCodeAt(i);
      if (code === 0x22 || code === 0x5c) {
        buffer[at++] = 0x5c;
        buffer[at++] = code;
      } else if (code < 0x20) {
        const short = SHORT_ESCAPES[code];
        buffer[at++] = 0x5c;
        if (short) {
          buffer[at++] = short;
        } else {
          buffer[at++] = 0x75; // u00XX
          buffer[at++] = 0x30;
          buffer[at++] = 0x30;
          buffer[at++] = HEX_DIGITS[code >> 4]!;
          buffer[at++] = HEX_DIGITS[code & 0xf]!;
        }
      } else if (code < 0x80) {
        buffer[at++] = code;
      } else if (code <= 0xff) {
        buffer[at++] = 0xc0 | (code >> 6);
        buffer[at++] = 0x80 | (code & 0x3f);
      } else {
        throw new RangeError('FrameWriter.binaryId: a code point above 255');
      }
    }
    buffer[at++] = 0x22;
    this.length = at;
    return this;
  }

  /** A non-negative integer in decimal (counts and intervals). */
  integer(value: number): this {
    if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`FrameWriter.integer: ${value}`);
    this.reserve(16);
    if (value === 0) {
      this.buffer[this.length++] = 0x30;
      return this;
    }
    let digits = 0;
    for (let rest = value; rest > 0; rest = Math.floor(rest / 10)) digits++;
    let at = this.length + digits;
    for (let rest = value; rest > 0; rest = Math.floor(rest / 10)) this.buffer[--at] = 0x30 + (rest % 10);
    this.length += digits;
    return this;
  }

  /** The frame built since `begin`; valid until the next `begin`. */
  frame(): Uint8Array {
    return this.buffer.subarray(0, this.length);
  }

  private reserve(size: number): void {
    if (this.length + size <= this.buffer.length) return;
    const grown = new Uint8Array(Math.max(this.buffer.length * 2, this.length + size));
    grown.set(this.buffer.subarray(0, this.length));
    this.buffer = grown;
  }
}
