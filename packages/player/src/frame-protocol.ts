// The iframe embed's postMessage protocol, shared by the embed page and the host-side client.
// A leaf module: it imports nothing of ours.
//
// host -> frame  { shoal: 'player', kind: 'command', id, command, args? }
// frame -> host  { shoal: 'player', kind: 'response', id, ok: true, result } | { …, ok: false, error: { code, message } }
// frame -> host  { shoal: 'player', kind: 'event', event, data }

export const protocolTag = 'player';

export type FrameCommand = 'play' | 'pause' | 'seek' | 'setVolume' | 'getStats';
export type FrameEvent = 'ready' | 'playing' | 'pause' | 'ended' | 'error' | 'stats';

export const frameCommands: readonly FrameCommand[] = ['play', 'pause', 'seek', 'setVolume', 'getStats'];
export const frameEvents: readonly FrameEvent[] = ['ready', 'playing', 'pause', 'ended', 'error', 'stats'];

export interface CommandArgs {
  play: undefined;
  pause: undefined;
  /** Seconds on the media timeline. */
  seek: { time: number };
  /** 0 to 1. */
  setVolume: { volume: number };
  getStats: undefined;
}

export interface CommandMessage {
  shoal: typeof protocolTag;
  kind: 'command';
  id: number;
  command: FrameCommand;
  args?: unknown;
}

export interface ResponseMessage {
  shoal: typeof protocolTag;
  kind: 'response';
  id: number;
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

/** A message of this protocol, or undefined for anything else posted to the window. */
export function parseFrameMessage(data: unknown): FrameMessage | undefined {
  if (!isRecord(data) || data.shoal !== protocolTag) return undefined;
  if (data.kind === 'command') {
    if (typeof data.id !== 'number' || !frameCommands.includes(data.command as FrameCommand)) return undefined;
    return data as unknown as CommandMessage;
  }
  if (data.kind === 'response') {
    if (typeof data.id !== 'number' || typeof data.ok !== 'boolean') return undefined;
    return data as unknown as ResponseMessage;
  }
  if (data.kind === 'event') {
    if (!frameEvents.includes(data.event as FrameEvent)) return undefined;
    return data as unknown as EventMessage;
  }
  return undefined;
}
