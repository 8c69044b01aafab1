// shoal-videojs.min.js: the video.js plugin for pages that load video.js with a script tag. It
// carries hls.js and Shoal but no video.js: loaded after video.js, it registers `shoal` with the
// page's `videojs` and adds Shoal's CSS. The global `ShoalVideojs` holds the plugin's API.
import shoalCss from './styles.css';
import { injectStyles } from './styles.js';
import type { VideoJsNamespace } from './video-js-api.js';
import { registerShoalPlugin } from './videojs-plugin.js';

export * from './videojs-entry.js';

const pageVideojs = (globalThis as { videojs?: VideoJsNamespace }).videojs;
if (typeof document !== 'undefined') injectStyles(shoalCss);
if (pageVideojs) registerShoalPlugin(pageVideojs);
else console.error('Shoal: shoal-videojs.min.js found no global `videojs`: load video.js first, or call ShoalVideojs.registerShoalPlugin(videojs).');
