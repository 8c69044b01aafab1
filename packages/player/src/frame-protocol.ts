// The iframe embed's postMessage protocol, shared by the embed page and the host-side client.
// Imports types only, so the frame client stays small.
//
// host -> frame  { shoal: 'player', kind: 'command', id, command, args? }
// frame -> host  { shoal: 'player', kind: 'response', id, ok: true, result } | { …, ok: false, error: { code, message } }
// frame -> host  { shoal: 'player', kind: 'event', event, data }
// Every command gets a response: unknown and malformed ones an error naming what was wrong.
import type { Caption } from './captions.js';
import type { PlaybackState } from './playback-state.js';
import type { Resolution } from './resolutions.js';
import type { PlayerStats } from './types.js';

export const protocolTag = 'player';

/** What the frame says when its player is ready (the `ready` event, and the answer to `hello`). */
export interface ReadyInfo {
  src: string;
  p2p: string;
  /** How the stream is played: 'hls.js', 'native' or 'none' (`engine` before issue 10). */
  playback: string;
}

/** The periodic `status` event: where playback is, twice a second. */
export interface PlaybackStatus {
  state: PlaybackState;
  currentTime: number;
  /** 0 before the stream's metadata, Infinity for live. */
  duration: number;
  volume: number;
  muted: boolean;
  playbackRate: number;
  /** The active entry of getResolutions(): -1 while "Auto" picks. */
  resolutionId: number | null;
}

/** Arguments of each command. */
export interface CommandArgs {
  /** Answered once the frame's player is ready: the client's ready handshake. */
  hello: undefined;
  play: undefined;
  pause: undefined;
  /** Seconds on the media timeline. */
  seek: { time: number };
  getCurrentTime: undefined;
  getDuration: undefined;
  /** 0 to 1; unmutes above 0. */
  setVolume: { volume: number };
  getVolume: undefined;
  mute: undefined;
  unmute: undefined;
  isMuted: undefined;
  /** 1 is normal speed. */
  setPlaybackRate: { rate: number };
  getPlaybackRate: undefined;
  getPlaybackRates: undefined;
  getResolutions: undefined;
  /** An id from getResolutions(); -1 for automatic. */
  setResolution: { id: number };
  getState: undefined;
  /** True while playing or buffering to play; false when paused, ended or not started. */
  isPlaying: undefined;
  getStats: undefined;
  getCaptions: undefined;
  /** An id from getCaptions(), or null to show none. */
  setCaption: { id: string | null };
  /** Stops playback and P2P and removes the player; later commands are answered DESTROYED. */
  destroy: undefined;
}

/** What each command resolves with. */
export interface CommandResults {
  hello: ReadyInfo;
  play: null;
  pause: null;
  seek: null;
  getCurrentTime: number;
  getDuration: number;
  setVolume: null;
  getVolume: number;
  mute: null;
  unmute: null;
  isMuted: boolean;
  setPlaybackRate: null;
  getPlaybackRate: number;
  getPlaybackRates: number[];
  getResolutions: Resolution[];
  setResolution: null;
  getState: PlaybackState;
  isPlaying: boolean;
  getStats: PlayerStats;
  getCaptions: Caption[];
  setCaption: null;
  destroy: null;
}

/** What each event carries. */
export interface FrameEventData {
  ready: ReadyInfo;
  playing: undefined;
  pause: undefined;
  ended: undefined;
  error: { code: string; message: string };
  /** The stats object, once a second. */
  stats: PlayerStats;
  /** Playback state changed: unstarted, buffering, playing, paused, ended. */
  statechange: { state: PlaybackState };
  /** Twice a second. */
  status: PlaybackStatus;
  volumechange: { volume: number; muted: boolean };
  ratechange: { playbackRate: number };
  /** The rendition list or the active entry changed. */
  resolutionchange: { resolutions: Resolution[] };
  /** The caption list or the one showing changed. */
  captionchange: { captions: Caption[] };
}

export type FrameCommand = keyof CommandArgs;
export type FrameEvent = keyof FrameEventData;

const commandNames: Record<FrameCommand, true> = {
  hello: true, play: true, pause: true, seek: true, getCurrentTime: true, getDuration: true, setVolume: true, getVolume: true,
  mute: true, unmute: true, isMuted: true, setPlaybackRate: true, getPlaybackRate: true, getPlaybackRates: true,
  getResolutions: true, setResolution: true, getState: true, isPlaying: true, getStats: true, getCaptions: true, setCaption: true,
  destroy: true,
};
const eventNames: Record<FrameEvent, true> = {
  ready: true, playing: true, pause: true, ended: true, error: true, stats: true,
  statechange: true, status: true, volumechange: true, ratechange: true, resolutionchange: true, captionchange: true,
};
export const frameCommands = Object.keys(commandNames) as FrameCommand[];
export const frameEvents = Object.keys(eventNames) as FrameEvent[];

/**
 * A command as received: the frame answers every one, so unknown names and missing ids are kept
 * for the answer to name them (`isFrameCommand` tells the known ones).
 */
export interface CommandMessage {
  shoal: typeof protocolTag;
  kind: 'command';
  /** null when the sender gave no numeric id; the answer then carries id null. */
  id: number | null;
  /** As sent: not necessarily a command of this protocol, or even a string. */
  command: unknown;
  args?: unknown;
}

export interface ResponseMessage {
  shoal: typeof protocolTag;
  kind: 'response';
  id: number | null;
  ok: boolean;
  result?: unknown;
  error?: { code: string; message: string };
}

export interface EventMessage {
  shoal: typeof protocolTag;
  kind: 'event';
  event: FrameEvent;
  data?: unknown;
}

export type FrameMessage = CommandMessage | ResponseMessage | EventMessage;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;
const owns = (table: object, key: unknown) => typeof key === 'string' && Object.prototype.hasOwnProperty.call(table, key);

export const isFrameCommand = (name: unknown): name is FrameCommand => owns(commandNames, name);

/** A message of this protocol, or undefined for anything else posted to the window. */
export function parseFrameMessage(data: unknown): FrameMessage | undefined {
  if (!isRecord(data) || data.shoal !== protocolTag) return undefined;
  if (data.kind === 'command') {
    const id = typeof data.id === 'number' && Number.isFinite(data.id) ? data.id : null;
    return { shoal: protocolTag, kind: 'command', id, command: data.command, args: data.args };
  }
  if (data.kind === 'response') {
    if ((typeof data.id !== 'number' && data.id !== null) || typeof data.ok !== 'boolean') return undefined;
    return data as unknown as ResponseMessage;
  }
  if (data.kind === 'event') {
    if (!owns(eventNames, data.event)) return undefined;
    return data as unknown as EventMessage;
  }
  return undefined;
}
