// The script-tag bundle (shoal-player.min.js, global `ShoalPlayer`): everything in the package
// entry, video.js's and Shoal's CSS added to the page, and then either the automatic mount of
// `<div data-shoal-src>` embeds once the page has parsed, or, on the iframe page
// (`<script … data-shoal-frame>`), the embed frame's player.
import videojsCss from 'video.js/dist/video-js.min.css';
import { mountEmbeds } from './embed-mount.js';
import { startEmbedFrame } from './frame-page.js';
import shoalCss from './styles.css';
import { injectStyles } from './styles.js';

export * from './index.js';

if (typeof document !== 'undefined') {
  injectStyles(`${videojsCss}\n${shoalCss}`);
  const script = document.currentScript;
  const start = script?.hasAttribute('data-shoal-frame')
    ? () => startEmbedFrame(document.getElementById(script.getAttribute('data-shoal-frame') || 'player') ?? document.body)
    : () => mountEmbeds();
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else queueMicrotask(start);
}
