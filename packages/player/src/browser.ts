// The script-tag bundle (shoal-player.min.js, global `ShoalPlayer`): everything in the package
// entry, plus the automatic mount of `<div data-shoal-src>` embeds once the page has parsed.
import { mountEmbeds } from './embed-mount.js';

export * from './index.js';

/** Set by the iframe page, which creates its one player itself. */
const manual = typeof document !== 'undefined' && document.currentScript?.hasAttribute('data-shoal-manual');
if (typeof document !== 'undefined' && !manual) {
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', () => mountEmbeds());
  else queueMicrotask(() => mountEmbeds());
}
