// The iframe embed page (embed.html): a full-window player configured by the query string,
// controlled by the host page through the postMessage protocol of frame-protocol.ts.
import { optionsFromQuery } from './embed-attributes.js';
import { PlayerError } from './errors.js';
import {
  parseFrameMessage,
  protocolTag,
  type CommandArgs,
  type CommandMessage,
  type CommandResults,
  type FrameCommand,
  type FrameEvent,
  type FrameEventData,
  type PlaybackStatus,
  type ReadyInfo,
  type ResponseMessage,
} from './frame-protocol.js';
import { playbackStateEvents } from './playback-state.js';
import { ShoalPlayer } from './player.js';

export interface EmbedFrame {
  player: ShoalPlayer | null;
  destroy(): void;
}

const statsIntervalMs = 1_000;
const statusIntervalMs = 500;

type Handlers = { [C in FrameCommand]: (args: Partial<NonNullable<CommandArgs[C]>>) => CommandResults[C] | Promise<CommandResults[C]> };

export function startEmbedFrame(container: Element = document.body, win: Window = window): EmbedFrame {
  const query = new URLSearchParams(win.location.search);
  // Events carry no secrets, so they go to any parent unless the host pins its origin (?origin=).
  const eventOrigin = query.get('origin') ?? '*';
  const post = (message: object, origin = eventOrigin) => {
    if (win.parent !== win) win.parent.postMessage(message, origin);
  };
  const emit = <E extends FrameEvent>(event: E, data?: FrameEventData[E]) => post({ shoal: protocolTag, kind: 'event', event, data });

  let player: ShoalPlayer;
  try {
    player = new ShoalPlayer(container, { ...optionsFromQuery(query), fluid: false, videojsOptions: { fill: true } });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const notice = document.createElement('p');
    notice.className = 'shoal-frame-error';
    notice.textContent = `This player could not start: ${message}`;
    container.append(notice);
    emit('error', { code: error instanceof PlayerError ? error.code : 'UNKNOWN', message });
    return { player: null, destroy: () => notice.remove() };
  }

  const readyInfo = (): ReadyInfo => ({ src: player.options.src, p2p: player.plan.p2p, playback: player.plan.playback });
  const whenReady = new Promise<ReadyInfo>((resolve) => player.videojs.ready(() => resolve(readyInfo())));
  const status = (): PlaybackStatus => ({
    state: player.getState(),
    currentTime: player.getCurrentTime(),
    duration: player.getDuration(),
    volume: player.getVolume(),
    muted: player.isMuted(),
    playbackRate: player.getPlaybackRate(),
    resolutionId: player.getResolutions().find((resolution) => resolution.active)?.id ?? null,
  });
  const handlers: Handlers = {
    hello: () => whenReady,
    play: () => player.play().then(() => null),
    pause: () => (player.pause(), null),
    seek: ({ time }) => (player.seek(Number(time)), null),
    getCurrentTime: () => player.getCurrentTime(),
    getDuration: () => player.getDuration(),
    setVolume: ({ volume }) => (player.setVolume(Number(volume)), null),
    getVolume: () => player.getVolume(),
    mute: () => (player.setMuted(true), null),
    unmute: () => (player.setMuted(false), null),
    isMuted: () => player.isMuted(),
    setPlaybackRate: ({ rate }) => (player.setPlaybackRate(Number(rate)), null),
    getPlaybackRate: () => player.getPlaybackRate(),
    getPlaybackRates: () => player.getPlaybackRates(),
    getResolutions: () => player.getResolutions(),
    setResolution: ({ id }) => (player.setResolution(Number(id)), null),
    getState: () => player.getState(),
    getStats: () => player.getStats(),
  };
  const run = async (message: CommandMessage): Promise<unknown> => {
    const args = typeof message.args === 'object' && message.args !== null ? message.args : {};
    return (handlers[message.command] as (args: object) => unknown)(args);
  };
  const onMessage = (event: MessageEvent) => {
    if (event.source !== win.parent) return;
    const message = parseFrameMessage(event.data);
    if (message?.kind !== 'command') return;
    const reply = (response: Omit<ResponseMessage, 'shoal' | 'kind' | 'id'>) =>
      post({ shoal: protocolTag, kind: 'response', id: message.id, ...response }, event.origin === 'null' ? '*' : event.origin);
    run(message).then(
      (result) => reply({ ok: true, result: result ?? null }),
      (error: unknown) =>
        reply({
          ok: false,
          error: {
            code: error instanceof PlayerError ? error.code : error instanceof Error ? error.name : 'FRAME_COMMAND',
            message: error instanceof Error ? error.message : String(error),
          },
        }),
    );
  };
  win.addEventListener('message', onMessage);

  for (const name of ['playing', 'pause', 'ended'] as const) player.on(name, () => emit(name));
  player.on('error', () => {
    const error = player.videojs.error();
    emit('error', { code: `MEDIA_ERR_${error?.code ?? 0}`, message: error?.message ?? 'playback failed' });
  });
  let lastState = player.getState();
  const checkState = () => {
    const state = player.getState();
    if (state === lastState) return;
    lastState = state;
    emit('statechange', { state });
  };
  for (const name of playbackStateEvents) player.on(name, checkState);
  player.on('volumechange', () => emit('volumechange', { volume: player.getVolume(), muted: player.isMuted() }));
  player.on('ratechange', () => emit('ratechange', { playbackRate: player.getPlaybackRate() }));
  let lastResolutions = '';
  const checkResolutions = () => {
    const resolutions = player.getResolutions();
    const text = JSON.stringify(resolutions);
    if (text === lastResolutions) return;
    lastResolutions = text;
    emit('resolutionchange', { resolutions });
  };
  player.on('shoallevels', checkResolutions);
  player.on('shoalsession', checkResolutions);

  const statsTimer = win.setInterval(() => emit('stats', player.getStats()), statsIntervalMs);
  const statusTimer = win.setInterval(() => {
    checkState();
    emit('status', status());
  }, statusIntervalMs);
  void whenReady.then((info) => emit('ready', info));
  return {
    player,
    destroy() {
      win.clearInterval(statsTimer);
      win.clearInterval(statusTimer);
      win.removeEventListener('message', onMessage);
      player.destroy();
    },
  };
}
