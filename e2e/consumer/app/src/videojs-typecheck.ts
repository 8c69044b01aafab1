// Under moduleResolution bundler: the app's own `videojs` and its players fit the plugin's types
// without a cast.
import videojs from 'video.js';
import { addShoal, registerShoalPlugin } from '@shoal/player/videojs';

registerShoalPlugin(videojs);
export const shoal = addShoal(videojs, videojs('video'), { trackers: [] });
