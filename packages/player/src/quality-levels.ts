// Fills video.js's quality level list (`player.qualityLevels()`, videojs-contrib-quality-levels,
// part of video.js 8's full build) from hls.js's levels, so quality pickers made for video.js see
// Shoal's renditions, follow its switches, and switch it by enabling levels.
import type { HlsSession } from './hls-session.js';
import type { Player } from './video-js-api.js';

interface QualityLevelListLike {
  readonly length: number;
  readonly [index: number]: unknown;
  selectedIndex_: number;
  addQualityLevel(representation: {
    id: string;
    width: number;
    height: number;
    bandwidth: number;
    frameRate: number | undefined;
    enabled: (enable?: boolean) => boolean | undefined;
  }): unknown;
  removeQualityLevel(level: unknown): unknown;
  trigger(event: { type: string; selectedIndex?: number }): void;
}

/** Keeps the player's quality level list in step with its hls.js session; a no-op where the plugin is absent. */
export function mirrorQualityLevels(player: Player, sessionOf: (player: Player) => HlsSession | undefined): void {
  const qualityLevels = (player as unknown as { qualityLevels?: () => QualityLevelListLike }).qualityLevels;
  if (typeof qualityLevels !== 'function') return;
  const list = qualityLevels.call(player);
  let session: HlsSession | undefined;
  let enabled: boolean[] = [];
  let applyQueued = false;

  const clear = () => {
    for (let index = list.length - 1; index >= 0; index -= 1) list.removeQualityLevel(list[index]);
    enabled = [];
  };
  // Pickers set `enabled` level by level: apply the whole set once they are done.
  const apply = () => {
    applyQueued = false;
    session?.allowLevels(enabled);
  };
  const sync = () => {
    const current = sessionOf(player);
    if (current !== session) {
      session = current;
      clear();
    }
    if (!session) return;
    const levels = session.hls.levels;
    if (levels.length !== list.length) {
      clear();
      enabled = levels.map(() => true);
      levels.forEach((level, index) => {
        list.addQualityLevel({
          id: String(index),
          width: level.width,
          height: level.height,
          bandwidth: level.bitrate,
          frameRate: level.frameRate || undefined,
          enabled: (enable) => {
            if (enable === undefined) return enabled[index];
            enabled[index] = enable;
            if (!applyQueued) queueMicrotask(apply);
            applyQueued = true;
            return undefined;
          },
        });
      });
    }
    const playing = session.hls.currentLevel;
    if (playing !== list.selectedIndex_) {
      list.selectedIndex_ = playing;
      list.trigger({ type: 'change', selectedIndex: playing });
    }
  };
  player.on('shoalsession', sync);
  player.on('shoallevels', sync);
  sync();
}
