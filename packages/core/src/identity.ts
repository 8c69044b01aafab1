// Who meets whom: swarm id, stream key (one per rendition) and the tracker's info_hash.
// Synchronous and dependency-free so a tracker server can compute the same hashes to
// allow-list them (crypto.subtle would be async).

/** The attributes of a rendition that identify it, whatever order the playlist lists variants in. */
export interface RenditionAttributes {
  bandwidth?: number;
  /** `1280x720` */
  resolution?: string;
  codecs?: string;
  audioGroup?: string;
  name?: string;
}

/** The manifest URL without query string or fragment: viewers of the same stream meet even with per-viewer tokens. */
export function swarmIdFromUrl(manifestUrl: string): string {
  const cut = manifestUrl.search(/[?#]/);
  return cut === -1 ? manifestUrl : manifestUrl.slice(0, cut);
}

/** The identity of one rendition of a stream: one swarm per stream key. */
export function streamKey(swarmId: string, rendition: RenditionAttributes = {}): string {
  const parts = [
    `bw=${rendition.bandwidth ?? ''}`,
    `res=${rendition.resolution ?? ''}`,
    `codecs=${rendition.codecs ?? ''}`,
    `audio=${rendition.audioGroup ?? ''}`,
    `name=${rendition.name ?? ''}`,
  ];
  return `${swarmId}|shoal1|${parts.join('|')}`;
}

const rotl = (value: number, bits: number) => (value << bits) | (value >>> (32 - bits));

/** SHA-1 (FIPS 180-4). Only for swarm naming, where the tracker protocol requires it; not for integrity. */
export function sha1(message: Uint8Array): Uint8Array {
  const bitLength = message.length * 8;
  const paddedLength = (((message.length + 8) >> 6) + 1) << 6;
  const padded = new Uint8Array(paddedLength);
  padded.set(message);
  padded[message.length] = 0x80;
  const view = new DataView(padded.buffer);
  view.setUint32(paddedLength - 8, Math.floor(bitLength / 0x1_0000_0000));
  view.setUint32(paddedLength - 4, bitLength >>> 0);
  let h0 = 0x67452301, h1 = 0xefcdab89, h2 = 0x98badcfe, h3 = 0x10325476, h4 = 0xc3d2e1f0;
  const w = new Int32Array(80);
  for (let block = 0; block < paddedLength; block += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getInt32(block + i * 4);
    for (let i = 16; i < 80; i++) w[i] = rotl(w[i - 3]! ^ w[i - 8]! ^ w[i - 14]! ^ w[i - 16]!, 1);
    let a = h0, b = h1, c = h2, d = h3, e = h4;
    for (let i = 0; i < 80; i++) {
      const [f, k] =
        i < 20 ? [(b & c) | (~b & d), 0x5a827999]
        : i < 40 ? [b ^ c ^ d, 0x6ed9eba1]
        : i < 60 ? [(b & c) | (b & d) | (c & d), 0x8f1bbcdc]
        : [b ^ c ^ d, 0xca62c1d6];
      const t = (rotl(a, 5) + f + e + k + w[i]!) | 0;
      e = d; d = c; c = rotl(b, 30); b = a; a = t;
    }
    h0 = (h0 + a) | 0; h1 = (h1 + b) | 0; h2 = (h2 + c) | 0; h3 = (h3 + d) | 0; h4 = (h4 + e) | 0;
  }
  const digest = new Uint8Array(20);
  const out = new DataView(digest.buffer);
  [h0, h1, h2, h3, h4].forEach((word, i) => out.setInt32(i * 4, word));
  return digest;
}

export const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);

/** The WebTorrent tracker's info_hash for a stream key: SHA-1's 20 bytes as a 20-character binary string. */
export function infoHash(key: string): string {
  return String.fromCharCode(...sha1(utf8(key)));
}

/** The same info_hash as 40 lowercase hex characters (for logs, allow-lists, URLs). */
export function infoHashHex(key: string): string {
  return toHex(sha1(utf8(key)));
}

export function toHex(bytes: Uint8Array): string {
  let hex = '';
  for (const byte of bytes) hex += byte.toString(16).padStart(2, '0');
  return hex;
}
