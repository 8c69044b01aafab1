// ShoalPlayer's options: the one place where their defaults live, validated at the boundary
// with a message naming the bad field.
import { PlayerError } from './errors.js';
import type { P2pEngine } from './types.js';

/** What creates the P2P engine for one playback session; the default is Shoal. */
export type P2pEngineFactory = (settings: P2pEngineSettings) => P2pEngine;

export interface P2pEngineSettings {
  /** Tracker URLs (ws:// or wss://). */
  trackers: string[];
  /** Passed through to the engine untouched (for Shoal: every `ShoalHls` option). */
  engineOptions: Record<string, unknown>;
}

export interface ShoalPlayerOptions {
  /** The HLS manifest (.m3u8) URL. Required. */
  src: string;
  /** WebTorrent tracker URLs. Default: none, which leaves P2P off (the stats panel says so). */
  trackers?: string[];
  /** P2P on or off. Default: true. */
  p2p?: boolean;
  /** Start playing as soon as possible. Browsers allow it reliably only when muted. Default: false. */
  autoplay?: boolean;
  /** Default: false. */
  muted?: boolean;
  /** Poster image URL. Default: none. */
  poster?: string;
  /** Show video.js's controls. Default: true. */
  controls?: boolean;
  /** Fill the container's width at 16:9 (video.js `fluid`). Default: true. */
  fluid?: boolean;
  /** Open the stats panel at start. Default: false. */
  statsOpen?: boolean;
  /** Add the player's CSS (video.js skin + Shoal's) to the page once. Default: true. */
  injectStyles?: boolean;
  /** hls.js config, passed through untouched (Shoal adds only its loaders). Default: {}. */
  hlsConfig?: Record<string, unknown>;
  /** P2P engine options, passed through untouched (Shoal's `ShoalHls` options). Default: {}. */
  engineOptions?: Record<string, unknown>;
  /** video.js player options, merged over ours. Default: {}. */
  videojsOptions?: Record<string, unknown>;
  /** Creates the P2P engine. Default: Shoal (`@shoal/hlsjs`). */
  engineFactory?: P2pEngineFactory;
}

export type ResolvedPlayerOptions = Required<Omit<ShoalPlayerOptions, 'poster' | 'engineFactory'>> &
  Pick<ShoalPlayerOptions, 'poster' | 'engineFactory'>;

export const playerDefaults = {
  trackers: [] as string[],
  p2p: true,
  autoplay: false,
  muted: false,
  controls: true,
  fluid: true,
  statsOpen: false,
  injectStyles: true,
} as const;

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function invalid(field: string, message: string): never {
  throw new PlayerError('INVALID_OPTION', `${field}: ${message}`);
}

function checkBoolean(options: Record<string, unknown>, field: string): void {
  if (options[field] !== undefined && typeof options[field] !== 'boolean') invalid(field, `expected true or false, got ${JSON.stringify(options[field])}`);
}

function checkObject(options: Record<string, unknown>, field: string): void {
  if (options[field] !== undefined && !isPlainObject(options[field])) invalid(field, 'expected a plain object');
}

export function resolvePlayerOptions(input: ShoalPlayerOptions): ResolvedPlayerOptions {
  if (!isPlainObject(input)) invalid('options', 'expected an object with at least `src`');
  const options = input as unknown as Record<string, unknown>;
  if (typeof input.src !== 'string' || input.src.trim() === '') invalid('src', 'expected the URL of an HLS manifest (.m3u8)');
  if (input.trackers !== undefined) {
    if (!Array.isArray(input.trackers)) invalid('trackers', 'expected an array of ws:// or wss:// URLs');
    for (const url of input.trackers) {
      if (typeof url !== 'string' || !/^wss?:\/\/./i.test(url)) invalid('trackers', `${JSON.stringify(url)} is not a ws:// or wss:// URL`);
    }
  }
  for (const field of ['p2p', 'autoplay', 'muted', 'controls', 'fluid', 'statsOpen', 'injectStyles']) checkBoolean(options, field);
  for (const field of ['hlsConfig', 'engineOptions', 'videojsOptions']) checkObject(options, field);
  if (input.poster !== undefined && typeof input.poster !== 'string') invalid('poster', 'expected an image URL');
  if (input.engineFactory !== undefined && typeof input.engineFactory !== 'function') invalid('engineFactory', 'expected a function');
  return {
    ...playerDefaults,
    hlsConfig: {},
    engineOptions: {},
    videojsOptions: {},
    ...Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined)),
    src: input.src.trim(),
    trackers: [...(input.trackers ?? playerDefaults.trackers)],
  } as ResolvedPlayerOptions;
}
