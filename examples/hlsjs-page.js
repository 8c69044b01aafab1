// hls.js (+ Shoal unless ?p2p=0) playing the demo origin's live or VOD stream.
// Query: stream=live|vod, p2p=0|1, worker=0|1.
import Hls from 'hls.js';

const params = new URLSearchParams(location.search);
const streamName = params.get('stream') === 'vod' ? 'vod' : 'live';
const p2pEnabled = params.get('p2p') !== '0';
const config = await (await fetch('/config.json')).json();
const manifestUrl = `${config.originUrl}/${streamName}/master.m3u8`;
const $ = (id) => document.getElementById(id);
$('title').textContent = `hls.js · ${streamName}${p2pEnabled ? ' · P2P' : ' · HTTP only'}`;

const hlsConfig = {
  enableWorker: params.get('worker') !== '0',
  // Keep the forward buffer modest, as a live player would: hls.js's defaults reach far ahead.
  maxBufferLength: 20,
  liveSyncDurationCount: 5,
};
const hls = new Hls(hlsConfig);
let shoal = null;
// Shoal attaches before loadSource(): from then on media segments load through it.
if (p2pEnabled) {
  const { attachShoal } = await import('/lib/shoal-hlsjs/shoal-hlsjs.browser.js');
  shoal = attachShoal(hls, {
    trackers: config.trackerUrls,
    // Bytes from peers reach the player only after their SHA-256 matches the origin's manifest.
    integrityManifestUrl: `${config.originUrl}/${streamName}/segments-sha256.json`,
  });
}
let fatalError = null;
hls.on(Hls.Events.ERROR, (_event, data) => {
  if (data.fatal) {
    fatalError = data.details;
    $('status').textContent = `fatal: ${data.details}`;
  }
});
hls.loadSource(manifestUrl);
hls.attachMedia($('video'));
$('video').play().catch(() => {});

const formatBytes = (bytes) => {
  const units = ['B', 'kB', 'MB', 'GB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
};
setInterval(() => {
  const video = $('video');
  const stats = shoal?.getStats();
  const http = stats?.httpBytes ?? 0;
  const p2p = stats?.p2pBytes ?? 0;
  // Where WebRTC is missing or no tracker answers, Shoal plays over HTTP and says why.
  $('p2p-state').textContent = !stats ? 'off (?p2p=0)' : stats.p2p === 'on' ? 'on' : `${stats.p2p}: ${stats.p2pReason}`;
  $('http-bytes').textContent = formatBytes(http);
  $('p2p-bytes').textContent = formatBytes(p2p);
  $('up-bytes').textContent = formatBytes(stats?.uploadBytes ?? 0);
  $('peers').textContent = String(stats?.peers ?? 0);
  $('p2p-share').textContent = http + p2p > 0 ? `${Math.round((100 * p2p) / (http + p2p))}%` : '–';
  const level = hls.levels[hls.currentLevel];
  $('level').textContent = level ? `${level.height}p · ${Math.round(level.bitrate / 1000)} kbit/s` : '–';
  $('latency').textContent = Number.isFinite(hls.latency) && streamName === 'live' ? `${hls.latency.toFixed(1)} s` : '–';
  if (!fatalError) $('status').textContent = video.paused ? 'paused' : `playing ${video.currentTime.toFixed(1)} s`;
}, 1000);
