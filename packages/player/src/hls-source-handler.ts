// A video.js source handler that plays HLS through hls.js (video.js's own VHS has no loader hook
// for Shoal). Registered on the Html5 tech ahead of the native handler; where hls.js cannot run
// (no MSE), it declines and the browser's native HLS, if any, takes over.
import Hls from 'hls.js';
import { showPlayerError, type VideoJs } from './video-js-api.js';
import { HlsSession, type ShoalTechOptions } from './hls-session.js';


interface SourceObject {
  src: string;
  type?: string;
}

interface TechLike {
  el(): Element;
  trigger(event: string): void;
}

const hlsTypes = /^(application\/(x-|vnd\.apple\.)mpegurl|audio\/mpegurl)$/i;
const sessions = new WeakMap<object, HlsSession>();
const registered = new WeakSet<object>();

export function isHlsSource(source: SourceObject): boolean {
  if (source.type) return hlsTypes.test(source.type.split(';')[0]!.trim());
  return /\.m3u8(?:[?#]|$)/i.test(source.src);
}

/** The hls.js playback behind a player's current source, or undefined (native or no source). */
export function sessionOf(player: { tech(safety?: unknown): unknown }): HlsSession | undefined {
  const tech = player.tech({ IWillNotUseThisInPlugins: true });
  return tech ? sessions.get(tech as object) : undefined;
}

/**
 * Registers the handler with this copy of video.js (once). Players pass their hls.js config and
 * P2P engine through `html5: { shoal: ShoalTechOptions }`.
 */
export function registerHlsSourceHandler(vjs: VideoJs): void {
  const Html5 = vjs.getTech('Html5') as unknown as {
    registerSourceHandler(handler: object, index?: number): void;
  } | undefined;
  if (!Html5 || registered.has(Html5)) return;
  registered.add(Html5);
  const handler = {
    name: 'shoal-hlsjs',
    canPlayType(type: string): '' | 'probably' {
      return hlsTypes.test(type) && Hls.isSupported() ? 'probably' : '';
    },
    canHandleSource(source: SourceObject): '' | 'probably' {
      return isHlsSource(source) && Hls.isSupported() ? 'probably' : '';
    },
    handleSource(source: SourceObject, tech: TechLike, techOptions: { shoal?: ShoalTechOptions; playerId?: string }) {
      const player = techOptions.playerId ? vjs.getPlayer(techOptions.playerId) : undefined;
      const session = new HlsSession(source.src, tech.el() as HTMLMediaElement, techOptions.shoal ?? {}, {
        levels: () => player?.trigger('shoallevels'),
        fatal: (error) => {
          if (!player) return;
          const show = () => {
            if (sessions.get(tech) === session) showPlayerError(player, error.message.replace(/^PLAYBACK_FATAL: /, ''));
          };
          show();
          // video.js clears errors on `loadstart`, which can fire after a fast failure (a 404 manifest).
          player.one('loadstart', show);
        },
      });
      sessions.set(tech, session);
      player?.trigger('shoalsession');
      return {
        dispose() {
          if (sessions.get(tech) === session) sessions.delete(tech);
          session.dispose();
        },
      };
    },
  };
  // Index 0: ahead of the native handler, which would otherwise claim HLS on Safari.
  Html5.registerSourceHandler(handler, 0);
}
