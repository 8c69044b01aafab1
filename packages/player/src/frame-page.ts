// The iframe embed page (embed.html): a full-window player configured by the query string,
// controlled by the host page through the postMessage protocol of frame-protocol.ts. Every
// command gets an answer: a result, the player's refusal, an unknown command named with the list
// of known ones, or (when the player could not start, or was destroyed) the reason it cannot act.
import { optionsFromQuery } from './embed-attributes.js';
import { PlayerError } from './errors.js';
import { commandHandlers, type CommandHandlers } from './frame-commands.js';
import { forwardPlayerEvents } from './frame-events.js';
import {
  frameCommands,
  isFrameCommand,
  parseFrameMessage,
  protocolTag,
  type CommandMessage,
  type FrameEvent,
  type FrameEventData,
  type ReadyInfo,
  type ResponseMessage,
} from './frame-protocol.js';
import { ShoalPlayer } from './player.js';

export interface EmbedFrame {
  /** null when the player could not start, and after the host's `destroy` command. */
  readonly player: ShoalPlayer | null;
  destroy(): void;
}

type ErrorInfo = NonNullable<ResponseMessage['error']>;

/** An error as the protocol carries it: its code, and its words without the code in front. */
function errorInfo(error: unknown): ErrorInfo {
  if (error instanceof PlayerError) return { code: error.code, message: error.detail };
  if (error instanceof Error) return { code: error.name || 'Error', message: error.message };
  return { code: 'UNKNOWN', message: String(error) };
}

/** Why a message cannot run: not a known command, or no usable id. Undefined when it can. */
function malformation(message: CommandMessage): PlayerError | undefined {
  if (typeof message.command !== 'string') {
    return new PlayerError('INVALID_COMMAND', `a command needs its name as a string in \`command\`, got ${JSON.stringify(message.command) ?? 'nothing'}`);
  }
  if (!isFrameCommand(message.command)) {
    return new PlayerError('UNKNOWN_COMMAND', `${JSON.stringify(message.command)} is not a command of this player; the commands are ${frameCommands.join(', ')}`);
  }
  if (message.id === null) return new PlayerError('INVALID_COMMAND', `${message.command}: a command needs a numeric \`id\`, which its answer carries back`);
  return undefined;
}

/** Says where the player would be why it could not start; returns the notice and the error commands get. */
function startFailure(container: Element, error: unknown): { notice: HTMLElement; info: ErrorInfo; unavailable: PlayerError } {
  const info = errorInfo(error);
  const notice = document.createElement('p');
  notice.className = 'shoal-frame-error';
  notice.textContent = `This player could not start: ${info.message}`;
  container.append(notice);
  return { notice, info, unavailable: new PlayerError('FRAME_START', `${info.code}: ${info.message}`, { frameError: info }) };
}

/**
 * The host's origin from `?origin=` (`https://site.example`, a trailing path is dropped), or
 * undefined when the parameter is absent. A value that is no http(s) origin throws: the frame then
 * takes no commands and posts nothing, rather than fall back to any parent.
 */
export function pinnedHostOrigin(query: URLSearchParams): string | undefined {
  const value = query.get('origin');
  if (value === null) return undefined;
  let origin = 'null';
  try {
    origin = new URL(value).origin;
  } catch {
    // Reported below with the parameter's value.
  }
  if (!/^https?:\/\//.test(origin)) throw new PlayerError('INVALID_OPTION', `origin (embed.html parameter): expected the host page's origin such as https://site.example, got ${JSON.stringify(value)}`);
  return origin;
}

export function startEmbedFrame(container: Element = document.body, win: Window = window): EmbedFrame {
  const query = new URLSearchParams(win.location.search);
  // With ?origin=, commands are taken from that origin only and every message goes to it alone
  // (a page of another origin that frames embed.html can neither drive the player nor read it).
  // Without it, any parent may: events carry nothing the parent could not see on screen.
  let pinned: string | undefined;
  let pinProblem: unknown;
  try {
    pinned = pinnedHostOrigin(query);
  } catch (error) {
    pinProblem = error;
    pinned = '';
  }
  const post = (message: object, origin = pinned ?? '*') => {
    if (win.parent !== win && origin !== '') win.parent.postMessage(message, origin);
  };
  const emit = <E extends FrameEvent>(event: E, data?: FrameEventData[E]) => post({ shoal: protocolTag, kind: 'event', event, data });

  let player: ShoalPlayer | null = null;
  let handlers: CommandHandlers | undefined;
  // Set when the player cannot act: it failed to start, or the host destroyed it.
  let unavailable: PlayerError | undefined;
  let notice: HTMLElement | undefined;
  let stopEvents = () => {};

  const destroyPlayer = () => {
    stopEvents();
    player?.destroy();
    player = null;
    handlers = undefined;
    notice?.remove();
    unavailable ??= new PlayerError('DESTROYED', 'the player in this frame was destroyed (the destroy command); load the frame again to play');
  };

  try {
    if (pinProblem) throw pinProblem;
    const options = optionsFromQuery(query);
    if (options.title !== undefined) win.document.title = options.title;
    player = new ShoalPlayer(container, { ...options, fluid: false, videojsOptions: { fill: true } });
  } catch (error) {
    const failure = startFailure(container, error);
    ({ notice, unavailable } = failure);
    emit('error', failure.info);
  }

  const run = async (message: CommandMessage): Promise<unknown> => {
    const problem = malformation(message);
    if (problem) throw problem;
    if (!handlers) throw unavailable!;
    const args = typeof message.args === 'object' && message.args !== null ? message.args : {};
    return (handlers[message.command as keyof CommandHandlers] as (args: object) => unknown)(args);
  };
  const onMessage = (event: MessageEvent) => {
    if (event.source !== win.parent || (pinned !== undefined && event.origin !== pinned)) return;
    const message = parseFrameMessage(event.data);
    if (message?.kind !== 'command') return;
    const reply = (response: Omit<ResponseMessage, 'shoal' | 'kind' | 'id'>) =>
      post({ shoal: protocolTag, kind: 'response', id: message.id, ...response }, pinned ?? (event.origin === 'null' ? '*' : event.origin));
    run(message).then(
      (result) => reply({ ok: true, result: result ?? null }),
      (error: unknown) => {
        // A start-up failure is answered with the start-up error itself: its code and words.
        const info = error instanceof PlayerError && error.frameError ? error.frameError : errorInfo(error);
        reply({ ok: false, error: info });
      },
    );
  };
  win.addEventListener('message', onMessage);

  if (player) {
    const started = player;
    const readyInfo = (): ReadyInfo => ({ src: started.options.src, p2p: started.plan.p2p, playback: started.plan.playback });
    const whenReady = new Promise<ReadyInfo>((resolve) => started.videojs.ready(() => resolve(readyInfo())));
    handlers = commandHandlers(started, whenReady, destroyPlayer);
    stopEvents = forwardPlayerEvents(started, emit, win);
    void whenReady.then((info) => {
      if (player === started) emit('ready', info);
    });
  }
  return {
    get player() {
      return player;
    },
    destroy() {
      destroyPlayer();
      win.removeEventListener('message', onMessage);
    },
  };
}
