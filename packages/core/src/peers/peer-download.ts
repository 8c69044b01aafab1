// The segment we download from one peer, as it arrives: from offset 0, or resumed after the bytes
// another peer sent (the whole is assembled in one buffer either way). Plain data and pure
// functions; the session (peer.ts) holds one and applies the protocol's rules to it.

/** A transfer resumed from another peer: the bytes that one sent, and the segment's size it said. */
export interface ResumedPrefix {
  prefix: Uint8Array;
  totalBytes: number;
}

export interface Download {
  sequence: number;
  startedMs: number;
  /** Allocated when the first data gives the size (a resume's prefix copied in then). */
  buffer: Uint8Array | undefined;
  /** Counted from offset 0: a resumed transfer starts at its prefix's length. */
  receivedBytes: number;
  resumed: ResumedPrefix | undefined;
  /** Asked while the peer was still receiving it (a relay): `absent` then is no lie. */
  relayed: boolean;
}

export interface DownloadProgress {
  startedMs: number;
  /** Where this peer's bytes start: the bytes before came from another peer (a resume), else 0. */
  startBytes: number;
  receivedBytes: number;
  totalBytes: number | undefined;
}

export function downloadProgress(download: Download): DownloadProgress {
  const { startedMs, receivedBytes, resumed } = download;
  return { startedMs, startBytes: resumed?.prefix.length ?? 0, receivedBytes, totalBytes: download.buffer?.length ?? resumed?.totalBytes };
}

/** Bytes this peer sent us of the segment: what its rate samples count (a resume's prefix is another peer's). */
export function bytesFromPeer(download: Download): number {
  return download.receivedBytes - (download.resumed?.prefix.length ?? 0);
}

/** What arrived from offset 0 (a resume's prefix included), and the segment's size if known. */
export function receivedPrefix(download: Download): { prefix: Uint8Array; totalBytes: number | undefined } {
  if (!download.buffer) return download.resumed ? { ...download.resumed } : { prefix: new Uint8Array(0), totalBytes: undefined };
  return { prefix: download.buffer.subarray(0, download.receivedBytes), totalBytes: download.buffer.length };
}
