// hls.js + Shoal through a bundler: this file is all an app needs (see build.mjs).
import Hls from 'hls.js';
import { attachShoal } from '@shoal/hlsjs';

const config = await (await fetch('/config.json')).json();
const video = document.getElementById('video');
const hls = new Hls({ maxBufferLength: 20 });
const shoal = attachShoal(hls, { trackers: config.trackerUrls });
hls.loadSource(`${config.originUrl}/live/master.m3u8`);
hls.attachMedia(video);
video.play().catch(() => {});

window.shoalBundlerDemo = { hls, shoal };
setInterval(() => {
  const stats = shoal.getStats();
  document.getElementById('stats').textContent =
    `HTTP ${(stats.httpBytes / 1e6).toFixed(2)} MB · P2P ${(stats.p2pBytes / 1e6).toFixed(2)} MB · ` +
    `uploaded ${(stats.uploadBytes / 1e6).toFixed(2)} MB · ${stats.peers} peers`;
}, 1000);
