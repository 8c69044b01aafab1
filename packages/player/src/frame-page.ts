// The iframe embed page (embed.html): a full-window player configured by the query string,
// controlled by the host page through the postMessage protocol of frame-protocol.ts.
import { optionsFromQuery } from './embed-attributes.js';
import { PlayerError } from './errors.js';
import { frameEvents, parseFrameMessage, protocolTag, type CommandMessage, type FrameEvent, type ResponseMessage } from './frame-protocol.js';
import { ShoalPlayer } from './player.js';

export interface EmbedFrame {
  player: ShoalPlayer | null;
  destroy(): void;
}

const statsIntervalMs = 1_000;

export function startEmbedFrame(container: Element = document.body, win: Window = window): EmbedFrame {
  const query = new URLSearchParams(win.location.search);
  // Events carry no secrets, so they go to any parent unless the host pins its origin (?origin=).
  const eventOrigin = query.get('origin') ?? '*';
  const post = (message: object, origin = eventOrigin) => {
    if (win.parent !== win) win.parent.postMessage(message, origin);
  };
  const emit = (event: FrameEvent, data?: unknown) => post({ shoal: protocolTag, kind: 'event', event, data });

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

  const run = async (message: CommandMessage): Promise<unknown> => {
    const args = (message.args ?? {}) as Record<string, unknown>;
    switch (message.command) {
      case 'play':
        return player.play();
      case 'pause':
        return player.pause();
      case 'seek':
        return player.seek(Number(args.time));
      case 'setVolume':
        return player.setVolume(Number(args.volume));
      case 'getStats':
        return player.getStats();
    }
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

  for (const name of frameEvents) {
    if (name === 'ready' || name === 'stats' || name === 'error') continue;
    player.on(name, () => emit(name));
  }
  player.on('error', () => {
    const error = player.videojs.error();
    emit('error', { code: `MEDIA_ERR_${error?.code ?? 0}`, message: error?.message ?? 'playback failed' });
  });
  const statsTimer = win.setInterval(() => emit('stats', player.getStats()), statsIntervalMs);
  player.videojs.ready(() => emit('ready', { src: player.options.src, p2p: player.plan.p2p, engine: player.plan.engine }));
  return {
    player,
    destroy() {
      win.clearInterval(statsTimer);
      win.removeEventListener('message', onMessage);
      player.destroy();
    },
  };
}
