// The host page's side of the iframe embed: typed commands that resolve with the frame's answer,
// and event listeners. Imports nothing heavy, so a host page stays small.
import { PlayerError } from './errors.js';
import { parseFrameMessage, protocolTag, type CommandArgs, type FrameCommand, type FrameEvent } from './frame-protocol.js';
import type { PlayerStats } from './types.js';

export type { FrameCommand, FrameEvent } from './frame-protocol.js';

export interface FrameEventData {
  ready: { src: string; p2p: string; engine: string };
  playing: undefined;
  pause: undefined;
  ended: undefined;
  error: { code: string; message: string };
  stats: PlayerStats;
}

export interface FrameClientOptions {
  /** How long a command waits for its answer. Default: 10000 ms. */
  timeoutMs?: number;
}

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
  timer: ReturnType<typeof setTimeout>;
}

type Listener<E extends FrameEvent> = (data: FrameEventData[E]) => void;

export class ShoalFrameClient {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly listeners = new Map<FrameEvent, Set<(data: unknown) => void>>();
  private readonly timeoutMs: number;
  private readonly onMessage: (event: MessageEvent) => void;
  private readyResolve!: () => void;
  private readonly readyPromise: Promise<void>;
  private destroyed = false;

  constructor(
    private readonly iframe: HTMLIFrameElement,
    options: FrameClientOptions = {},
    private readonly win: Window = window,
  ) {
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.readyPromise = new Promise((resolve) => (this.readyResolve = resolve));
    this.onMessage = (event) => {
      if (event.source !== this.iframe.contentWindow) return;
      const message = parseFrameMessage(event.data);
      if (!message) return;
      if (message.kind === 'response') {
        const waiting = this.pending.get(message.id);
        if (!waiting) return;
        this.pending.delete(message.id);
        clearTimeout(waiting.timer);
        if (message.ok) waiting.resolve(message.result);
        else waiting.reject(new PlayerError('FRAME_COMMAND', `${message.error?.code ?? 'ERROR'}: ${message.error?.message ?? 'command failed'}`));
      } else if (message.kind === 'event') {
        if (message.event === 'ready') this.readyResolve();
        for (const listener of this.listeners.get(message.event) ?? []) listener(message.data);
      }
    };
    this.win.addEventListener('message', this.onMessage);
  }

  /** Resolves once the frame's player has said `ready`. */
  ready(): Promise<void> {
    return this.readyPromise;
  }

  play(): Promise<void> {
    return this.send('play', undefined).then(() => undefined);
  }

  pause(): Promise<void> {
    return this.send('pause', undefined).then(() => undefined);
  }

  seek(time: number): Promise<void> {
    return this.send('seek', { time }).then(() => undefined);
  }

  setVolume(volume: number): Promise<void> {
    return this.send('setVolume', { volume }).then(() => undefined);
  }

  getStats(): Promise<PlayerStats> {
    return this.send('getStats', undefined) as Promise<PlayerStats>;
  }

  /** Returns the function that removes the listener. */
  on<E extends FrameEvent>(event: E, listener: Listener<E>): () => void {
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    const wrapped = listener as (data: unknown) => void;
    set.add(wrapped);
    return () => set.delete(wrapped);
  }

  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.win.removeEventListener('message', this.onMessage);
    for (const waiting of this.pending.values()) {
      clearTimeout(waiting.timer);
      waiting.reject(new PlayerError('FRAME_COMMAND', 'the frame client was destroyed'));
    }
    this.pending.clear();
    this.listeners.clear();
  }

  private send<C extends FrameCommand>(command: C, args: CommandArgs[C]): Promise<unknown> {
    if (this.destroyed) return Promise.reject(new PlayerError('FRAME_COMMAND', 'the frame client was destroyed'));
    const target = this.iframe.contentWindow;
    if (!target) return Promise.reject(new PlayerError('FRAME_COMMAND', 'the iframe is not attached to a document'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new PlayerError('FRAME_TIMEOUT', `${command}: no answer from the player frame within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      target.postMessage({ shoal: protocolTag, kind: 'command', id, command, args }, frameOrigin(this.iframe, this.win));
    });
  }
}

function frameOrigin(iframe: HTMLIFrameElement, win: Window): string {
  try {
    const origin = new URL(iframe.src, win.location.href).origin;
    return origin === 'null' ? '*' : origin;
  } catch {
    return '*';
  }
}
