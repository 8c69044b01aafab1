// The title across the top of the video (the `title` option, embed attribute and parameter):
// shown before playback and while the viewer moves the pointer, faded with the controls otherwise.
import type { Player } from '../video-js-api.js';

export function installTitleBar(player: Player, title: string): HTMLElement {
  const bar = document.createElement('div');
  bar.className = 'shoal-title-bar';
  bar.textContent = title;
  player.el().append(bar);
  return bar;
}
