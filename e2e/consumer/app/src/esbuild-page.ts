// A web developer's page, bundled by esbuild: the complete player from the ESM package, its CSS
// imported as files (video.js's skin, Shoal's panel and menu).
import { create } from '@shoal/player';
import 'video.js/dist/video-js.css';
import '@shoal/player/styles.css';

const config = (await (await fetch('/config.json')).json()) as { src: string; trackerUrls: string[] };
const player = create('#player', { src: config.src, trackers: config.trackerUrls, autoplay: true, muted: true, statsOpen: true });
// What the consumer test reads.
Object.assign(window, { consumer: { bundler: 'esbuild', stats: () => player.getStats() } });
