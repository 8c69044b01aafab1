// Every engine option, its default and its validation live here and nowhere else.
import { ShoalError } from './errors.js';
import type { LatencyMode, SegmentRef } from './types.js';

/**
 * Judges a segment's bytes. `true`: valid. `false`: corrupt (a peer that sent it is banned and
 * the segment is fetched again over HTTP). `undefined`: no opinion: the integrity manifest
 * decides if one is configured, otherwise the segment is accepted.
 */
export type SegmentValidator = (
  ref: SegmentRef,
  bytes: Uint8Array,
) => boolean | undefined | Promise<boolean | undefined>;

export interface EngineOptions {
  /** Peers with the same swarm id meet. Default: the manifest URL without query (set by the player integration). */
  swarmId: string | undefined;
  /** How much time P2P gets. `auto` derives it from the player's live sync target and distance to the live edge. */
  latencyMode: LatencyMode;
  /** Download from peers at all. With `false`, the engine is a plain HTTP loader with stats. */
  p2pDownload: boolean;
  /** Serve segments to peers. */
  upload: boolean;
  /** Upload cap in bytes per second over all peers; 0 means no cap. Below it, uploads are paced by what the uplink carries without queueing. */
  uploadRateLimitBytesPerS: number;
  /** Upload pace before the uplink's queueing delay is measured; it then adapts (see upload-governor.ts). */
  initialUploadPaceBytesPerS: number;
  /** Connected peers per swarm (rendition) at most. */
  maxPeers: number;
  /** Ask the trackers for more peers while connected peers are below this. */
  targetPeers: number;
  /** The segment store's size limit in bytes. */
  storeBytesLimit: number;
  /** An HTTP download is budgeted at its expected duration times this factor... */
  httpSafetyFactor: number;
  /** ...plus this margin, in milliseconds (request latency, jitter). */
  httpSafetyMarginMs: number;
  /** HTTP throughput assumed before the first measurement. */
  initialHttpThroughputBytesPerS: number;
  /** Peer throughput assumed before a peer's first measurement. */
  initialPeerThroughputBytesPerS: number;
  /** How far ahead of the playhead (seconds of media) P2P prefetches in VOD and `high` mode; `normal` uses half, `low` none. */
  p2pWindowS: number;
  /** Concurrent P2P downloads at most, over all peers: legs, one per peer (a segment from several senders takes one per sender). */
  maxP2PDownloads: number;
  /**
   * Live: how many peers, among those this peer knows, fetch a new segment from the origin. With 1,
   * peers also relay a neighbour's "fetching" to theirs, so that peers that do not know each other
   * do not both fetch it; with more, only direct announcements count.
   */
  seedersPerSegment: number;
  /**
   * Live: elected origin fetchers start within this spread, best-ranked first, so that the news of
   * a better-ranked peer's fetch (relayed from neighbour to neighbour) pre-empts a duplicate
   * fetch. The best of N peers starts after about this / (N + 1).
   */
  seedStaggerMs: number;
  /** How often the scheduler re-plans while there is work in flight. */
  tickIntervalMs: number;
  /** Optional segment check for bytes that came (wholly or partly) from peers. */
  validateSegment: SegmentValidator | undefined;
  /** Optional SHA-256 manifest (PeerTube format) checked for bytes that came from peers. */
  integrityManifestUrl: string | undefined;
  /**
   * Download from peers only while their bytes can be verified (a validator, a manifest, or an
   * origin that sends Repr-Digest); otherwise P2P is `unavailable` and segments come over HTTP.
   */
  requireVerifiedP2P: boolean;
}

export type EngineOptionsInput = Partial<EngineOptions>;

export const DEFAULT_OPTIONS: Readonly<EngineOptions> = Object.freeze({
  swarmId: undefined,
  latencyMode: 'auto',
  p2pDownload: true,
  upload: true,
  uploadRateLimitBytesPerS: 0,
  initialUploadPaceBytesPerS: 16 * 1024,
  maxPeers: 12,
  targetPeers: 6,
  storeBytesLimit: 64 * 1024 * 1024,
  httpSafetyFactor: 1.5,
  httpSafetyMarginMs: 1000,
  initialHttpThroughputBytesPerS: 1_000_000,
  initialPeerThroughputBytesPerS: 500_000,
  p2pWindowS: 60,
  maxP2PDownloads: 4,
  seedersPerSegment: 1,
  seedStaggerMs: 2000,
  tickIntervalMs: 250,
  validateSegment: undefined,
  integrityManifestUrl: undefined,
  requireVerifiedP2P: false,
});

const LATENCY_MODES: readonly LatencyMode[] = ['auto', 'low', 'normal', 'high'];

/** Throws INVALID_OPTION: `${object}.${field}` must be `expected`, and what it got. */
export function invalidOption(object: string, field: string, expected: string, value: unknown): never {
  const shown = typeof value === 'function' ? 'a function' : (JSON.stringify(value) ?? String(value));
  throw new ShoalError('INVALID_OPTION', `${object}.${field} must be ${expected}, got ${shown}`);
}

/**
 * `input` (which must be an object, as `object` names it) over `defaults`, but its fields that are
 * undefined: an option left undefined takes its default. The fields are validated after.
 */
export function overDefaults<T extends object>(object: string, defaults: Readonly<Partial<T>>, input: Partial<T>): T {
  if (typeof input !== 'object' || input === null) invalidOption(object, '', 'an object', input);
  return { ...defaults, ...Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined)) } as T;
}

function invalid(field: string, expected: string, value: unknown): never {
  return invalidOption('options', field, expected, value);
}

/** Merges the input over the defaults and validates every field; throws INVALID_OPTION naming the field. */
export function resolveOptions(input: EngineOptionsInput = {}): EngineOptions {
  const options = overDefaults('options', DEFAULT_OPTIONS, input);
  for (const key of Object.keys(input)) {
    if (!(key in DEFAULT_OPTIONS)) {
      throw new ShoalError('INVALID_OPTION', `options.${key} is not an option; known: ${Object.keys(DEFAULT_OPTIONS).join(', ')}`);
    }
  }
  const number = (field: keyof EngineOptions, min: number, integer = false) => {
    const value = options[field];
    if (typeof value !== 'number' || !Number.isFinite(value) || value < min || (integer && !Number.isInteger(value))) {
      invalid(field, `${integer ? 'an integer' : 'a finite number'} >= ${min}`, value);
    }
  };
  if (!LATENCY_MODES.includes(options.latencyMode)) invalid('latencyMode', `one of ${LATENCY_MODES.join(', ')}`, options.latencyMode);
  for (const field of ['p2pDownload', 'upload', 'requireVerifiedP2P'] as const) {
    if (typeof options[field] !== 'boolean') invalid(field, 'a boolean', options[field]);
  }
  if (options.swarmId !== undefined && (typeof options.swarmId !== 'string' || options.swarmId === '')) {
    invalid('swarmId', 'a non-empty string', options.swarmId);
  }
  number('uploadRateLimitBytesPerS', 0);
  number('initialUploadPaceBytesPerS', 1024);
  number('maxPeers', 0, true);
  number('targetPeers', 0, true);
  number('storeBytesLimit', 1, true);
  number('httpSafetyFactor', 1);
  number('httpSafetyMarginMs', 0);
  number('initialHttpThroughputBytesPerS', 1);
  number('initialPeerThroughputBytesPerS', 1);
  number('p2pWindowS', 0);
  number('maxP2PDownloads', 0, true);
  number('seedersPerSegment', 1, true);
  number('seedStaggerMs', 0);
  number('tickIntervalMs', 10);
  if (options.targetPeers > options.maxPeers) invalid('targetPeers', `<= maxPeers (${options.maxPeers})`, options.targetPeers);
  const { validateSegment, integrityManifestUrl } = options;
  if (validateSegment !== undefined && typeof validateSegment !== 'function') invalid('validateSegment', 'a function', validateSegment);
  if (integrityManifestUrl !== undefined && (typeof integrityManifestUrl !== 'string' || !integrityManifestUrl)) invalid('integrityManifestUrl', 'a URL string', integrityManifestUrl);
  return options;
}
