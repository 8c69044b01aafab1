// The control bar's quality menu: "Auto" plus one item per hls.js level, rebuilt whenever hls.js
// reports new levels or a switch. Hidden while there is nothing to choose.
import type { HlsSession } from '../hls-session.js';
import type { ComponentClass, MenuButtonLike, MenuItemLike, Player, VideoJsNamespace } from '../video-js-api.js';

export const qualityMenuName = 'ShoalQualityMenuButton';

export function registerQualityMenu(vjs: VideoJsNamespace, sessionOf: (player: Player) => HlsSession | undefined): void {
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
      const resolutions = session?.resolutions() ?? [];
      // "Auto" and one level: nothing to choose.
      if (resolutions.length < 3) {
        this.hide();
        return [];
      }
      this.show();
      const current = session!.rendition();
      return resolutions.map((resolution) => {
        // "Auto" names the rendition ABR is on.
        const label = resolution.id < 0 && resolution.active && current ? `Auto (${current.height > 0 ? `${current.height}p` : 'on'})` : resolution.label;
        return new QualityItem(player, { label, levelIndex: resolution.id, selected: resolution.active });
      });
    }
  }

  vjs.registerComponent(qualityMenuName, QualityMenuButton as never);
}
