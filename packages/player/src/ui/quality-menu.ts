// The control bar's quality menu: "Auto" plus one item per hls.js level, rebuilt whenever hls.js
// reports new levels or a switch. Hidden while there is nothing to choose.
import type { HlsSession } from '../hls-session.js';
import type { ComponentClass, MenuButtonLike, MenuItemLike, Player, VideoJs } from '../video-js-api.js';

export const qualityMenuName = 'ShoalQualityMenuButton';

interface LevelChoice {
  index: number;
  label: string;
}

export function levelChoices(levels: ReadonlyArray<{ height: number; bitrate: number }>): LevelChoice[] {
  const choices = levels.map((level, index) => ({
    index,
    height: level.height,
    bitrate: level.bitrate,
    label: level.height > 0 ? `${level.height}p` : `${Math.round(level.bitrate / 1000)} kbit/s`,
  }));
  // Two levels with the same height are told apart by bitrate.
  for (const choice of choices) {
    if (choices.some((other) => other !== choice && other.label === choice.label)) choice.label += ` · ${Math.round(choice.bitrate / 1000)} kbit/s`;
  }
  return choices.sort((a, b) => b.height - a.height || b.bitrate - a.bitrate).map(({ index, label }) => ({ index, label }));
}

export function registerQualityMenu(vjs: VideoJs, sessionOf: (player: Player) => HlsSession | undefined): void {
  if (vjs.getComponent(qualityMenuName)) return;
  const MenuItem = vjs.getComponent('MenuItem') as unknown as ComponentClass<MenuItemLike>;
  const MenuButton = vjs.getComponent('MenuButton') as unknown as ComponentClass<MenuButtonLike>;

  class QualityItem extends MenuItem {
    private readonly levelIndex: number;
    constructor(player: Player, options: { label: string; levelIndex: number; selected: boolean }) {
      super(player, { label: options.label, selectable: true, selected: options.selected, multiSelectable: false });
      this.levelIndex = options.levelIndex;
    }
    override handleClick(): void {
      sessionOf(this.player())?.selectLevel(this.levelIndex);
    }
  }

  class QualityMenuButton extends MenuButton {
    constructor(player: Player, options: Record<string, unknown> = {}) {
      super(player, options);
      this.controlText('Quality');
      const refresh = () => this.update();
      player.on('shoallevels', refresh);
      player.on('shoalsession', refresh);
      player.on('loadstart', refresh);
    }
    override buildCSSClass(): string {
      return `shoal-quality-button ${super.buildCSSClass()}`;
    }
    override buildWrapperCSSClass(): string {
      return `shoal-quality-menu ${super.buildWrapperCSSClass()}`;
    }
    override createItems() {
      const player = this.player();
      const session = sessionOf(player);
      const levels = session?.hls.levels ?? [];
      if (levels.length < 2) {
        this.hide();
        return [];
      }
      this.show();
      const auto = session!.hls.autoLevelEnabled;
      // With a manual choice pending, nextLevel is what the user picked.
      const chosen = auto ? -1 : session!.hls.nextLevel >= 0 ? session!.hls.nextLevel : session!.hls.currentLevel;
      const current = session!.rendition();
      const autoLabel = auto && current ? `Auto (${current.height > 0 ? `${current.height}p` : 'on'})` : 'Auto';
      return [
        new QualityItem(player, { label: autoLabel, levelIndex: -1, selected: auto }),
        ...levelChoices(levels).map(
          (choice) => new QualityItem(player, { label: choice.label, levelIndex: choice.index, selected: !auto && choice.index === chosen }),
        ),
      ];
    }
  }

  vjs.registerComponent(qualityMenuName, QualityMenuButton as never);
}
