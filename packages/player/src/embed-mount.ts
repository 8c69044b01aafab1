// The script-tag embed: every `<div data-shoal-src="…m3u8">` becomes a player.
import { embedAttributes, optionsFromAttributes } from './embed-attributes.js';
import { ShoalPlayer } from './player.js';

const mounted = new WeakMap<Element, ShoalPlayer>();

/** The player an embed div became, if any. */
export function playerOf(element: Element): ShoalPlayer | undefined {
  return mounted.get(element);
}

/** Mounts every embed div under `root` not mounted yet; returns the new players. */
export function mountEmbeds(root: ParentNode = document): ShoalPlayer[] {
  const players: ShoalPlayer[] = [];
  for (const element of root.querySelectorAll(`[${embedAttributes.src}]`)) {
    if (mounted.has(element)) continue;
    try {
      const player = new ShoalPlayer(element, optionsFromAttributes(element));
      mounted.set(element, player);
      players.push(player);
    } catch (error) {
      // A broken embed says so where the video would be, and in the console for the site owner.
      const message = error instanceof Error ? error.message : String(error);
      const notice = document.createElement('p');
      notice.className = 'shoal-embed-error';
      notice.textContent = `Shoal player: ${message}`;
      element.append(notice);
      console.error(`Shoal player: could not mount`, element, error);
    }
  }
  return players;
}
