// A JSON value kept as the UTF-8 bytes it arrived in. The tracker relays offers, answers and
// ids by copying these bytes into the outgoing frame: no decoding, no re-serializing.

/** Bytes [start, end) of `source`: one complete JSON value (an object, a string with its quotes, ...). */
export interface JsonSlice {
  readonly source: Uint8Array;
  readonly start: number;
  readonly end: number;
}

const encoder = new TextEncoder();

/** The slice holding `JSON.stringify(value)`: for requests parsed from text rather than bytes. */
export function jsonSliceOf(value: unknown): JsonSlice {
  const source = encoder.encode(JSON.stringify(value));
  return { source, start: 0, end: source.length };
}
