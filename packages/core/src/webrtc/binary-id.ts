// 20-byte ids (info_hash, peer_id, offer_id) in their two spellings: the WebTorrent tracker
// protocol's 20-character binary strings (one char per byte) and our 40-character hex.

export function binaryToHex(binary: string): string {
  let hex = '';
  for (let i = 0; i < binary.length; i++) hex += binary.charCodeAt(i).toString(16).padStart(2, '0');
  return hex;
}

export function hexToBinary(hex: string): string {
  let binary = '';
  for (let i = 0; i < hex.length; i += 2) binary += String.fromCharCode(parseInt(hex.slice(i, i + 2), 16));
  return binary;
}

export const isBinaryId = (value: unknown): value is string =>
  typeof value === 'string' && value.length === 20 && !/[^\0-\xff]/.test(value);

/** 20 random bytes as a binary string; `prefix` (ASCII) replaces the first bytes. */
export function randomBinaryId(prefix = ''): string {
  const bytes = crypto.getRandomValues(new Uint8Array(20 - prefix.length));
  return prefix + String.fromCharCode(...bytes);
}
