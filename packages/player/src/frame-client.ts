// The host page's side of the iframe embed: typed commands that resolve with the frame's answer,
// and event listeners. Imports nothing heavy, so a host page stays small.
import type { Caption } from './captions.js';
import { PlayerError } from './errors.js';
import {
  parseFrameMessage,
  protocolTag,
  type CommandArgs,
  type CommandResults,
  type FrameCommand,
  type FrameEvent,
  type FrameEventData,
  type ReadyInfo,
} from './frame-protocol.js';
import type { PlaybackState } from './playback-state.js';
import type { Resolution } from './resolutions.js';
import type { PlayerStats } from './types.js';

export type { FrameCommand, FrameEvent, FrameEventData } from './frame-protocol.js';

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
  private readonly onLoad: () => void;
  private readyResolve!: (info: ReadyInfo) => void;
  private readyReject!: (error: PlayerError) => void;
  private readonly readyPromise: Promise<ReadyInfo>;
  /** Settled: resolved with the frame's ready info, or rejected with why it cannot be ready. */
  private isReady = false;
  private destroyed = false;
  private destroying: Promise<void> | undefined;

  constructor(
    private readonly iframe: HTMLIFrameElement,
    options: FrameClientOptions = {},
    private readonly win: Window = window,
  ) {
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.readyPromise = new Promise((resolve, reject) => {
      this.readyResolve = resolve;
      this.readyReject = reject;
    });
    // A host that never calls ready() must not see an unhandled rejection when the frame fails.
    this.readyPromise.catch(() => undefined);
    this.onMessage = (event) => {
      // The frame's window may have been navigated away from the player (its src attribute still
      // names the player): only a message from the player's own origin is the player's.
      if (event.source !== this.iframe.contentWindow || !fromOrigin(event.origin, frameOrigin(this.iframe, this.win))) return;
      const message = parseFrameMessage(event.data);
      if (!message) return;
      if (message.kind === 'response') {
        const waiting = message.id === null ? undefined : this.pending.get(message.id);
        if (!waiting) return;
        this.pending.delete(message.id!);
        clearTimeout(waiting.timer);
        if (message.ok) waiting.resolve(message.result);
        else {
          const frameError = { code: String(message.error?.code ?? 'ERROR'), message: String(message.error?.message ?? 'command failed') };
          waiting.reject(new PlayerError('FRAME_COMMAND', `${frameError.code}: ${frameError.message}`, { frameError }));
        }
      } else if (message.kind === 'event') {
        if (message.event === 'ready') this.becomeReady(message.data as ReadyInfo);
        for (const listener of this.listeners.get(message.event) ?? []) listener(message.data);
      }
    };
    this.win.addEventListener('message', this.onMessage);
    // The frame announces `ready` once; a client created later asks (hello), and asks again each
    // time the frame loads a page, which covers a frame that was still loading.
    this.onLoad = () => this.hello();
    this.iframe.addEventListener('load', this.onLoad);
    this.hello();
  }

  /**
   * Resolves once the frame's player is ready, whenever this client was created; rejects with
   * `FRAME_START` (the frame's own code and message in `frameError`) when it could not start.
   */
  ready(): Promise<ReadyInfo> {
    return this.readyPromise;
  }

  play(): Promise<void> {
    return this.send('play', undefined).then(() => undefined);
  }

  pause(): Promise<void> {
    return this.send('pause', undefined).then(() => undefined);
  }

  /** Seconds on the media timeline. */
  seek(time: number): Promise<void> {
    return this.send('seek', { time }).then(() => undefined);
  }

  getCurrentTime(): Promise<number> {
    return this.send('getCurrentTime', undefined);
  }

  /** 0 before the stream's metadata, Infinity for live. */
  getDuration(): Promise<number> {
    return this.send('getDuration', undefined);
  }

  /** 0 to 1; unmutes above 0. */
  setVolume(volume: number): Promise<void> {
    return this.send('setVolume', { volume }).then(() => undefined);
  }

  getVolume(): Promise<number> {
    return this.send('getVolume', undefined);
  }

  mute(): Promise<void> {
    return this.send('mute', undefined).then(() => undefined);
  }

  unmute(): Promise<void> {
    return this.send('unmute', undefined).then(() => undefined);
  }

  isMuted(): Promise<boolean> {
    return this.send('isMuted', undefined);
  }

  /** 1 is normal speed. */
  setPlaybackRate(rate: number): Promise<void> {
    return this.send('setPlaybackRate', { rate }).then(() => undefined);
  }

  getPlaybackRate(): Promise<number> {
    return this.send('getPlaybackRate', undefined);
  }

  /** The speeds the player's control bar offers. */
  getPlaybackRates(): Promise<number[]> {
    return this.send('getPlaybackRates', undefined);
  }

  /** "Auto" (id -1) and each rendition, highest first; `active` marks what plays. */
  getResolutions(): Promise<Resolution[]> {
    return this.send('getResolutions', undefined);
  }

  /** An id from getResolutions(); -1 for automatic. */
  setResolution(id: number): Promise<void> {
    return this.send('setResolution', { id }).then(() => undefined);
  }

  getState(): Promise<PlaybackState> {
    return this.send('getState', undefined);
  }

  /** True while playing or buffering to play. */
  isPlaying(): Promise<boolean> {
    return this.send('isPlaying', undefined);
  }

  /** The stream's subtitles and captions; `mode: 'showing'` marks the one on screen. */
  getCaptions(): Promise<Caption[]> {
    return this.send('getCaptions', undefined);
  }

  /** An id from getCaptions(), or null to show none. */
  setCaption(id: string | null): Promise<void> {
    return this.send('setCaption', { id }).then(() => undefined);
  }

  getStats(): Promise<PlayerStats> {
    return this.send('getStats', undefined);
  }

  /** Returns the function that removes the listener. */
  on<E extends FrameEvent>(event: E, listener: Listener<E>): () => void {
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    const wrapped = listener as (data: unknown) => void;
    set.add(wrapped);
    return () => set.delete(wrapped);
  }

  /**
   * Stops the frame's player (playback, P2P, its tracker connection) and removes it, then stops
   * this client. Resolves when the frame confirmed; the iframe element stays the host's to remove.
   */
  destroy(): Promise<void> {
    if (this.destroyed) return Promise.resolve();
    this.destroying ??= this.send('destroy', undefined).then(
      () => this.detach(),
      (error: unknown) => {
        this.detach();
        throw error;
      },
    );
    return this.destroying;
  }

  /** Stops this client (listeners, pending commands) and leaves the frame's player running. */
  detach(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.win.removeEventListener('message', this.onMessage);
    this.iframe.removeEventListener('load', this.onLoad);
    for (const waiting of this.pending.values()) {
      clearTimeout(waiting.timer);
      waiting.reject(new PlayerError('FRAME_COMMAND', 'the frame client was stopped (destroy() or detach())'));
    }
    this.pending.clear();
    this.listeners.clear();
  }

  private becomeReady(info: ReadyInfo): void {
    if (this.isReady) return;
    this.isReady = true;
    this.readyResolve(info);
  }

  private hello(): void {
    if (this.isReady || this.destroyed) return;
    this.send('hello', undefined).then(
      (info) => this.becomeReady(info),
      (error: PlayerError) => {
        // Unanswered while the frame is still loading: its `ready` event or the next load covers
        // that. An answer that refuses says the player cannot be ready (it failed to start).
        if (this.isReady || !error.frameError) return;
        this.isReady = true;
        this.readyReject(new PlayerError('FRAME_START', `${error.frameError.code}: ${error.frameError.message}`, { frameError: error.frameError }));
      },
    );
  }

  private send<C extends FrameCommand>(command: C, args: CommandArgs[C]): Promise<CommandResults[C]> {
    if (this.destroyed) return Promise.reject(new PlayerError('FRAME_COMMAND', 'the frame client was stopped (destroy() or detach())'));
    const target = this.iframe.contentWindow;
    if (!target) return Promise.reject(new PlayerError('FRAME_COMMAND', 'the iframe is not attached to a document'));
    const id = this.nextId++;
    return new Promise<CommandResults[C]>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new PlayerError('FRAME_TIMEOUT', `${command}: no answer from the player frame within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject, timer });
      target.postMessage({ shoal: protocolTag, kind: 'command', id, command, args }, frameOrigin(this.iframe, this.win));
    });
  }
}

/** '*' stands for an opaque origin (a sandboxed frame), whose messages say 'null'. */
function fromOrigin(origin: string, expected: string): boolean {
  return expected === '*' ? origin === 'null' : origin === expected;
}

/** The player's origin, from the iframe's src; '*' when the frame's origin is opaque. */
function frameOrigin(iframe: HTMLIFrameElement, win: Window): string {
  if (iframe.hasAttribute('sandbox') && !iframe.sandbox.contains('allow-same-origin')) return '*';
  try {
    const origin = new URL(iframe.src, win.location.href).origin;
    return origin === 'null' ? '*' : origin;
  } catch {
    return '*';
  }
}
