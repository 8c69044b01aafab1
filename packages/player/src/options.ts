// The options of ShoalPlayer and of the video.js plugin: the one place where their defaults
// live, validated at the boundary with a message naming the bad field.
import { iceServersProblem } from '@shoal/core/webrtc';
import { PlayerError } from './errors.js';
import type { P2pEngine } from './types.js';

/** What creates the P2P engine for one playback session; the default is Shoal. */
export type P2pEngineFactory = (settings: P2pEngineSettings) => P2pEngine;

export interface P2pEngineSettings {
  /** Tracker URLs (ws:// or wss://). */
  trackers: string[];
  /** ICE servers for WebRTC; undefined: the engine's default (Shoal: public STUN servers). */
  iceServers: RTCIceServer[] | undefined;
  /** Passed through to the engine untouched (for Shoal: every `ShoalHls` option). */
  engineOptions: Record<string, unknown>;
  /** The SHA-256 integrity manifest's URL (PeerTube format), or undefined. */
  integrity: string | undefined;
  /** Refuse P2P while nothing can verify peers' bytes. */
  requireVerifiedP2P: boolean | undefined;
}

/** What Shoal adds to a video.js player: `player.shoal(options)` and ShoalPlayer alike. */
export interface ShoalPluginOptions {
  /** WebTorrent tracker URLs. Default: none, which leaves P2P off (the stats panel says so). */
  trackers?: string[];
  /** P2P on or off. Default: true. */
  p2p?: boolean;
  /**
   * ICE servers for WebRTC (STUN, and TURN with `username` + `credential`). Default: public STUN
   * servers (Google, Twilio), so viewers behind home NATs connect; `[]` turns STUN off.
   */
  iceServers?: RTCIceServer[];
  /**
   * URL of the SHA-256 integrity manifest (`{file: sha256}` or `{file: {"start-end": sha256}}`, as
   * `shoal-manifest` writes it): peers' bytes reach the player only if they match it. Default: none
   * (peers' bytes are then checked against the origin's Repr-Digest where it sends one).
   */
  integrity?: string;
  /** Download from peers only while their bytes can be verified (manifest or Repr-Digest). Default: false. */
  requireVerifiedP2P?: boolean;
  /** hls.js config, passed through untouched (Shoal adds only its loaders). Default: {}. */
  hlsConfig?: Record<string, unknown>;
  /** P2P engine options, passed through untouched (Shoal's `ShoalHls` options). Default: {}. */
  engineOptions?: Record<string, unknown>;
  /** Creates the P2P engine. Default: Shoal (`@shoal/hlsjs`). */
  engineFactory?: P2pEngineFactory;
  /** Add the P2P stats button and panel to the control bar (`{ open: true }`: panel open). Default: false. */
  statsView?: boolean | { open?: boolean };
  /** Add the quality menu ("Auto" + one item per rendition) to the control bar. Default: false. */
  qualityMenu?: boolean;
}

export type ResolvedPluginOptions = Required<Omit<ShoalPluginOptions, 'iceServers' | 'engineFactory' | 'statsView' | 'integrity' | 'requireVerifiedP2P'>> &
  Pick<ShoalPluginOptions, 'iceServers' | 'engineFactory' | 'integrity' | 'requireVerifiedP2P'> & { statsView: { open: boolean } | false };

export interface ShoalPlayerOptions extends Omit<ShoalPluginOptions, 'statsView' | 'qualityMenu'> {
  /** The HLS manifest (.m3u8) URL. Required. */
  src: string;
  /** Start playing as soon as possible. Browsers allow it reliably only when muted. Default: false. */
  autoplay?: boolean;
  /** Default: false. */
  muted?: boolean;
  /** Poster image URL. Default: none. */
  poster?: string;
  /** Show video.js's controls (control bar and big play button). Default: true. */
  controls?: boolean;
  /** VOD: seconds where playback begins. Default: 0. */
  start?: number;
  /** VOD: seconds where playback pauses (or, with `loop`, starts again). Default: the end. */
  stop?: number;
  /** VOD: play again from `start` (or 0) at `stop` or at the end. Default: false. */
  loop?: boolean;
  /** Text shown across the top of the video (and the iframe page's title). Default: none. */
  title?: string;
  /** Language of the subtitles to show at start ('en', 'fr'), when the stream has them. Default: none shown. */
  subtitle?: string;
  /** Fill the container's width at 16:9 (video.js `fluid`). Default: true. */
  fluid?: boolean;
  /** Open the stats panel at start. Default: false. */
  statsOpen?: boolean;
  /** video.js player options, merged over ours. Default: {}. */
  videojsOptions?: Record<string, unknown>;
}

type OptionalPlayerFields = 'poster' | 'engineFactory' | 'iceServers' | 'start' | 'stop' | 'title' | 'subtitle' | 'integrity' | 'requireVerifiedP2P';
export type ResolvedPlayerOptions = Required<Omit<ShoalPlayerOptions, OptionalPlayerFields>> & Pick<ShoalPlayerOptions, OptionalPlayerFields>;

export const pluginDefaults = {
  trackers: [] as string[],
  p2p: true,
  statsView: false,
  qualityMenu: false,
} as const;

export const playerDefaults = {
  trackers: [] as string[],
  p2p: true,
  autoplay: false,
  muted: false,
  controls: true,
  loop: false,
  fluid: true,
  statsOpen: false,
} as const;

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function invalid(field: string, message: string): never {
  throw new PlayerError('INVALID_OPTION', `${field}: ${message}`);
}

function checkBoolean(options: Record<string, unknown>, field: string): void {
  if (options[field] !== undefined && typeof options[field] !== 'boolean') invalid(field, `expected true or false, got ${JSON.stringify(options[field])}`);
}

function checkSeconds(options: Record<string, unknown>, field: string): void {
  const value = options[field];
  if (value !== undefined && (typeof value !== 'number' || !Number.isFinite(value) || value < 0)) invalid(field, `expected seconds (a number, 0 or more), got ${JSON.stringify(value)}`);
}

function checkObject(options: Record<string, unknown>, field: string): void {
  if (options[field] !== undefined && !isPlainObject(options[field])) invalid(field, 'expected a plain object');
}

/** The fields the plugin and the player share: trackers, p2p, iceServers, hlsConfig, engineOptions, engineFactory. */
function checkP2pFields(input: ShoalPluginOptions): void {
  const options = input as Record<string, unknown>;
  if (input.trackers !== undefined) {
    if (!Array.isArray(input.trackers)) invalid('trackers', 'expected an array of ws:// or wss:// URLs');
    for (const url of input.trackers) {
      if (typeof url !== 'string' || !/^wss?:\/\/./i.test(url)) invalid('trackers', `${JSON.stringify(url)} is not a ws:// or wss:// URL`);
    }
  }
  if (input.iceServers !== undefined) {
    const problem = iceServersProblem(input.iceServers);
    if (problem !== undefined) invalid('iceServers', problem);
  }
  checkBoolean(options, 'p2p');
  checkBoolean(options, 'requireVerifiedP2P');
  if (input.integrity !== undefined && (typeof input.integrity !== 'string' || !/^(https?:\/\/|\/|\.)/i.test(input.integrity))) {
    invalid('integrity', `expected the URL of a SHA-256 manifest (https://…/manifest.json), got ${JSON.stringify(input.integrity)}`);
  }
  for (const field of ['hlsConfig', 'engineOptions']) checkObject(options, field);
  if (input.engineFactory !== undefined && typeof input.engineFactory !== 'function') invalid('engineFactory', 'expected a function');
}

const definedFields = (input: object) => Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined));

export function resolvePluginOptions(input: ShoalPluginOptions = {}): ResolvedPluginOptions {
  if (!isPlainObject(input as unknown)) invalid('options', 'expected an object');
  checkP2pFields(input);
  checkBoolean(input as Record<string, unknown>, 'qualityMenu');
  const { statsView } = input;
  if (statsView !== undefined && typeof statsView !== 'boolean' && !(isPlainObject(statsView) && (statsView.open === undefined || typeof statsView.open === 'boolean'))) {
    invalid('statsView', 'expected true, false or { open: boolean }');
  }
  return {
    ...pluginDefaults,
    hlsConfig: {},
    engineOptions: {},
    ...definedFields(input),
    trackers: [...(input.trackers ?? pluginDefaults.trackers)],
    statsView: statsView === undefined || statsView === false ? false : { open: statsView === true ? false : statsView.open === true },
  } as ResolvedPluginOptions;
}

export function resolvePlayerOptions(input: ShoalPlayerOptions): ResolvedPlayerOptions {
  if (!isPlainObject(input)) invalid('options', 'expected an object with at least `src`');
  const options = input as unknown as Record<string, unknown>;
  if (typeof input.src !== 'string' || input.src.trim() === '') invalid('src', 'expected the URL of an HLS manifest (.m3u8)');
  checkP2pFields(input);
  for (const field of ['autoplay', 'muted', 'controls', 'loop', 'fluid', 'statsOpen']) checkBoolean(options, field);
  checkObject(options, 'videojsOptions');
  if (input.poster !== undefined && typeof input.poster !== 'string') invalid('poster', 'expected an image URL');
  checkSeconds(options, 'start');
  checkSeconds(options, 'stop');
  if (input.stop !== undefined && input.stop <= (input.start ?? 0)) invalid('stop', `${input.stop} s is not after start (${input.start ?? 0} s)`);
  if (input.title !== undefined && typeof input.title !== 'string') invalid('title', 'expected text');
  if (input.subtitle !== undefined && (typeof input.subtitle !== 'string' || !/^[a-z]{2,3}(-[a-z0-9]{1,8})*$/i.test(input.subtitle))) {
    invalid('subtitle', `expected a language tag such as "en" or "pt-BR", got ${JSON.stringify(input.subtitle)}`);
  }
  return {
    ...playerDefaults,
    hlsConfig: {},
    engineOptions: {},
    videojsOptions: {},
    ...definedFields(input),
    src: input.src.trim(),
    trackers: [...(input.trackers ?? playerDefaults.trackers)],
  } as ResolvedPlayerOptions;
}
