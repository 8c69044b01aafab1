// Shared types of the engine. A leaf module: it imports nothing of ours, so every other module
// may import it without creating a cycle. The engine talks to the world only through the
// interfaces below (Clock, HttpClient, PeerTransport, Signaling, SegmentStore), injected at
// construction: real ones in the browser, virtual ones in tests and in the swarm simulator.

/** How far behind the live edge the player sits decides how much time P2P has. */
export type LatencyMode = 'auto' | 'low' | 'normal' | 'high';

/** Where a segment's bytes came from. */
export type SegmentSource = 'http' | 'p2p' | 'store';

/** Milliseconds since an arbitrary origin; virtual in tests. */
export interface Clock {
  now(): number;
  setTimeout(callback: () => void, delayMs: number): TimerId;
  clearTimeout(timer: TimerId): void;
}
export type TimerId = unknown;

/** A half-open byte range: `start` inclusive, `end` exclusive. */
export interface ByteRange {
  start: number;
  end: number;
}

export interface HttpRequest {
  url: string;
  /** Only these bytes (sent as `Range: bytes=start-(end-1)`). */
  range?: ByteRange;
  /** A resource that changes (a live integrity manifest): revalidate with the server rather than trust a cached copy. */
  revalidate?: boolean;
  /** Only the response's headers (a HEAD request): the body resolves empty. */
  head?: boolean;
  /** Optional: called once, before the first chunk, with the response's headers (by name, any case). */
  onHeaders?: (header: (name: string) => string | null) => void;
  /** Called for every chunk as it arrives, for throughput measurement and progress. */
  onData?: (chunk: Uint8Array) => void;
  /**
   * Optional: called once, before the first chunk, with the body's length when the response says
   * it (Content-Length): the engine can then relay the bytes to peers as they arrive.
   */
  onLength?: (bytes: number) => void;
}

export interface HttpTransfer {
  /** The whole body; rejects with a ShoalError (HTTP_STATUS, HTTP_NETWORK, ABORTED). */
  readonly body: Promise<Uint8Array>;
  abort(): void;
}

export interface HttpClient {
  fetch(request: HttpRequest): HttpTransfer;
}

export interface PeerTransportEvents {
  message(data: Uint8Array): void;
  /** The channel is gone (remote close, ICE failure, or our own close()). Called once. */
  close(reason?: string): void;
  /** bufferedAmount dropped below the low-water mark: sending may resume. */
  drain(): void;
}

/** One connected peer: an open, ordered, reliable binary channel. */
export interface PeerTransport {
  /** The remote peer's id (40 hex characters of its 20-byte tracker peer_id). */
  readonly remotePeerId: string;
  /** Bytes queued but not yet sent. */
  readonly bufferedAmount: number;
  /**
   * The largest message the channel carries both ways, bytes (WebRTC: the connection's
   * `RTCSctpTransport.maxMessageSize`); undefined when not known: the protocol's largest message
   * (16 KiB of data and its header) then goes, which every browser carries.
   */
  readonly maxMessageBytes?: number;
  send(data: Uint8Array): void;
  close(): void;
  /** Installs the handlers; events before this call are queued, not lost. */
  setEvents(events: PeerTransportEvents): void;
}

export interface SignalingEvents {
  /** A new peer of this swarm is connected. */
  peer(transport: PeerTransport): void;
  /** A tracker could not be reached or its connection broke; signaling retries by itself. */
  error(error: Error): void;
  /** Something to know that is not a failure of the connection, e.g. the tracker's `failure reason` for this swarm (announces then pause as it asks). */
  warning(message: string): void;
  /**
   * Optional: how many peers the tracker counts in this swarm, this peer included (an announce
   * response's `complete` + `incomplete`). Live-edge seeding uses it to elect about
   * `seedersPerSegment` origin fetchers in the whole swarm, not one per neighbourhood.
   */
  swarmSize?(peers: number): void;
}

/** Membership of one swarm (one rendition of one stream). */
export interface SwarmSignal {
  /** Ask the trackers for peers soon, e.g. while connected peers are below target. */
  requestPeers(): void;
  leave(): void;
}

/** Finds peers: the tracker client plus WebRTC, or a simulated tracker. */
export interface Signaling {
  /** This peer's id: 40 hex characters (20 bytes). */
  readonly localPeerId: string;
  join(infoHash: string, events: SignalingEvents): SwarmSignal;
  destroy(): void;
  /**
   * Optional: tells `listener`, on every change, why no peer can be found now (every tracker
   * unreachable since one failed, or RTCPeerConnection failing), or undefined once it works again.
   */
  watchStatus?(listener: (problem: string | undefined) => void): void;
}

/** A media segment as the playlist describes it. */
export interface SegmentRef {
  /** Rendition identity (see identity.ts streamKey). */
  streamKey: string;
  /** Media sequence number. */
  sequence: number;
  url: string;
  /** For EXT-X-BYTERANGE playlists. */
  byteRange?: ByteRange;
  /** Start on the playlist timeline, seconds. */
  startS: number;
  durationS: number;
}

/** What the player reports about playback; drives deadlines. */
export interface PlaybackReport {
  positionS: number;
  /** 0 while paused. */
  rate: number;
  /** End of the contiguous buffer ahead of positionS, seconds. */
  bufferedUntilS: number;
  isLive: boolean;
  /** Live only: the playlist's live edge on the same timeline. */
  liveEdgeS?: number;
  /** Live only: the player's own target distance to the edge (hls.js liveSyncDuration). */
  targetLatencyS?: number;
}

/**
 * Where finished segments live. Bounded in bytes; evicts behind the playhead first.
 * Ownership rule: the store keeps its own copy of what it is given and hands out only copies,
 * because the player may transfer (detach) any buffer it receives.
 */
export interface SegmentStore {
  readonly bytesUsed: number;
  readonly bytesLimit: number;
  has(streamKey: string, sequence: number): boolean;
  /** Size in bytes of a stored segment, or undefined. */
  sizeOf(streamKey: string, sequence: number): number | undefined;
  /** A fresh copy the caller owns, or undefined. */
  get(streamKey: string, sequence: number): Uint8Array | undefined;
  /** A fresh copy of bytes [start, end) of a stored segment (for upload), or undefined. */
  read(streamKey: string, sequence: number, start: number, end: number): Uint8Array | undefined;
  /** Stores a copy of `bytes`; false when it cannot fit even after eviction. */
  put(ref: SegmentRef, bytes: Uint8Array): boolean;
  /** Tells the store where playback is; may evict segments now behind it when over the limit. */
  setPlayhead(streamKey: string, positionS: number): void;
  /** Sequences stored for a stream, ascending. */
  sequences(streamKey: string): number[];
  /** Called with every segment the store drops. */
  onEvict(listener: (streamKey: string, sequence: number) => void): void;
  clear(): void;
}
