// A video.js source handler that plays HLS through hls.js (video.js's own VHS has no loader hook
// for Shoal), for the players Shoal was added to. Registered on the Html5 tech ahead of VHS and the
// native handler; other players of the same video.js, and browsers where hls.js cannot run (no
// MSE), are left to VHS or the browser's native HLS.
import Hls from 'hls.js';
import { showPlayerError, type Player, type VideoJsNamespace } from './video-js-api.js';
import { HlsSession, type ShoalTechOptions } from './hls-session.js';
import { bindSubtitles, type TextTrackOwner } from './hls-subtitles.js';

export interface SourceObject {
  src: string;
  type?: string;
}

interface TechLike extends TextTrackOwner {
  el(): Element;
  trigger(event: string): void;
}

const hlsTypes = /^(application\/(x-|vnd\.apple\.)mpegurl|audio\/mpegurl)$/i;
const sessions = new WeakMap<object, HlsSession>();
const registered = new WeakSet<object>();
/** By player id: video.js hands a source handler the player's id, not the player. */
const techOptionsByPlayer = new Map<string, ShoalTechOptions>();

export function isHlsSource(source: SourceObject): boolean {
  if (source.type) return hlsTypes.test(source.type.split(';')[0]!.trim());
  return /\.m3u8(?:[?#]|$)/i.test(source.src);
}

/** The hls.js playback behind a player's current source, or undefined (native or no source). */
export function sessionOf(player: { tech(safety?: unknown): unknown }): HlsSession | undefined {
  const tech = player.tech({ IWillNotUseThisInPlugins: true });
  return tech ? sessions.get(tech as object) : undefined;
}

/** From now on, this player's HLS sources play through hls.js with these settings (until it is disposed). */
export function playThroughHls(player: Player, options: ShoalTechOptions): void {
  const id = player.id();
  techOptionsByPlayer.set(id, options);
  player.one('dispose', () => {
    if (techOptionsByPlayer.get(id) === options) techOptionsByPlayer.delete(id);
  });
}

/** Registers the handler with this copy of video.js (once). */
export function registerHlsSourceHandler(vjs: VideoJsNamespace): void {
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
    canHandleSource(source: SourceObject, options?: { playerId?: string }): '' | 'probably' {
      if (!isHlsSource(source) || !Hls.isSupported()) return '';
      // The player picks a tech with options that name no player: say yes, so that a video.js
      // without VHS picks Html5 too. The tech then asks again with its player's id.
      if (options?.playerId === undefined) return 'probably';
      return techOptionsByPlayer.has(options.playerId) ? 'probably' : '';
    },
    handleSource(source: SourceObject, tech: TechLike, techOptions: { playerId?: string }) {
      const player = techOptions.playerId ? vjs.getPlayer(techOptions.playerId) : undefined;
      const options = techOptionsByPlayer.get(techOptions.playerId ?? '') ?? {};
      // hls.js hands subtitle cues over instead of drawing them on the <video> itself: video.js
      // draws them, and lists the tracks in its captions menu (hls-subtitles.ts). An app may set it back.
      const hlsConfig = { renderTextTracksNatively: false, ...options.hlsConfig };
      const session = new HlsSession(source.src, tech.el() as HTMLMediaElement, { ...options, hlsConfig }, {
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
      // The stream's subtitle renditions become the tech's text tracks: video.js's captions menu lists them.
      const subtitles = bindSubtitles(session.hls, tech);
      sessions.set(tech, session);
      player?.trigger('shoalsession');
      return {
        dispose() {
          if (sessions.get(tech) === session) sessions.delete(tech);
          subtitles.dispose();
          session.dispose();
        },
      };
    },
  };
  // Index 0: ahead of VHS and of the native handler, which would otherwise claim HLS on Safari.
  Html5.registerSourceHandler(handler, 0);
}
