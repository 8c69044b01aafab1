// Shared types of the player. A leaf module: it imports nothing of ours, so every other module
// may import it without creating a cycle.

/** Cumulative counters a P2P engine reports; the player derives speeds and shares from them. */
export interface P2pCounters {
  /** Media bytes fetched from the origin over HTTP. */
  httpBytes: number;
  /** Media bytes received from peers. */
  p2pBytes: number;
  /** Bytes uploaded to peers. */
  uploadedBytes: number;
  /** Peers connected right now. */
  peers: number;
}

/**
 * What the player needs from a P2P engine, and nothing more: hls.js options to merge (its
 * loaders), an attach step, counters, and a destroy. `@shoal/hlsjs` is adapted to this in
 * shoal-engine.ts; tests and other engines can provide their own.
 */
export interface P2pEngine {
  /** hls.js config fields to merge into the player's own (loader classes and the like). */
  hlsConfig(): Record<string, unknown>;
  attach(hls: unknown): void;
  counters(): P2pCounters;
  /** Optional: the engine's own word on P2P once attached (e.g. `unavailable`: no WebRTC here, or no tracker answers). */
  status?(): { state: P2pState; reason: string };
  destroy(): void;
}

/** How the stream is being played. */
export type Playback = 'hls.js' | 'native' | 'none';

/**
 * Whether P2P is running: `off` when not asked for (`p2p: false`, no tracker), `unavailable` when
 * asked for but it cannot run here or now (no MSE, no WebRTC, no tracker answers, it failed to
 * start); `p2pNote` says why. Playback goes on over HTTP either way.
 */
export type P2pState = 'on' | 'off' | 'unavailable';

export interface RenditionInfo {
  /** hls.js level index; -1 when played natively (the browser picks). */
  index: number;
  width: number;
  height: number;
  bitrate: number;
  /** True while hls.js picks the level itself (the quality menu's "Auto"). */
  auto: boolean;
}

/** One snapshot of what the stats view shows; also what `getStats()` returns. */
export interface PlayerStats {
  playback: Playback;
  p2p: P2pState;
  /** A sentence for people: why P2P is off or what failed, empty when P2P is on. */
  p2pNote: string;
  httpBytes: number;
  p2pBytes: number;
  uploadedBytes: number;
  peers: number;
  /** Download speed over the last few seconds, HTTP + P2P, bytes per second. */
  downloadBytesPerS: number;
  /** Upload speed over the last few seconds, bytes per second. */
  uploadBytesPerS: number;
  /** p2pBytes / (httpBytes + p2pBytes), or null before the first byte. */
  p2pShare: number | null;
  rendition: RenditionInfo | null;
  /** Seconds buffered ahead of the playhead. */
  bufferS: number;
  /** Distance to the live edge in seconds; null for VOD or when unknown. */
  liveLatencyS: number | null;
  currentTimeS: number;
  paused: boolean;
}
