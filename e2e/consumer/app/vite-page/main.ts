// A web developer's page that already has video.js, bundled by Vite: Shoal added with the plugin
// entry (which brings no second video.js), and a quality picker's listener on qualityLevels().
import videojs from 'video.js';
import 'video.js/dist/video-js.css';
import { addShoal, registerShoalPlugin } from '@shoal/player/videojs';
import '@shoal/player/styles.css';

registerShoalPlugin(videojs);
const config = (await (await fetch('/config.json')).json()) as { src: string; trackerUrls: string[] };
const player = videojs('video', { autoplay: 'muted' });
// A third-party listener: it knows video.js's quality level list, nothing of Shoal. (video.js's
// typings leave out the plugins it bundles, hence the cast.)
const heightsSeen: number[] = [];
const qualityLevels = (player as unknown as { qualityLevels(): { on(event: string, listener: (event: { qualityLevel: { height: number } }) => void): void } }).qualityLevels();
qualityLevels.on('addqualitylevel', (event) => heightsSeen.push(event.qualityLevel.height));
// The typed twin of `player.shoal(options)`.
const shoal = addShoal(videojs, player, { trackers: config.trackerUrls, statsView: { open: true } });
player.src({ src: config.src, type: 'application/x-mpegURL' });
Object.assign(window, { consumer: { bundler: 'vite', stats: () => shoal.getStats(), heightsSeen } });
