// hls.js (+ Shoal unless ?p2p=0) playing the demo origin's live or VOD stream.
// Query: stream=live|vod, p2p=0|1, worker=0|1, corrupt=1 (this viewer uploads corrupted bytes:
// for the test that peers verify segments and ban a bad peer).
import Hls from 'hls.js';

const params = new URLSearchParams(location.search);
const streamName = params.get('stream') === 'vod' ? 'vod' : 'live';
const p2pEnabled = params.get('p2p') !== '0';
const config = await (await fetch('/config.json')).json();
const manifestUrl = `${config.originUrl}/${streamName}/master.m3u8`;
const $ = (id) => document.getElementById(id);
$('title').textContent = `hls.js · ${streamName}${p2pEnabled ? ' · P2P' : ' · HTTP only'}`;

// State the browser tests read.
const demo = { errors: [], fatalError: null, hls: null, shoal: null, stalls: 0, firstFrameMs: null };
window.shoalDemo = demo;

const hlsConfig = {
  enableWorker: params.get('worker') !== '0',
  // Keep the forward buffer modest, as a live player would: hls.js's defaults reach far ahead.
  maxBufferLength: 20,
  liveSyncDurationCount: 5,
};
const hls = new Hls(hlsConfig);
demo.hls = hls;
// Shoal attaches before loadSource(): from then on media segments load through it.
if (p2pEnabled) {
  const { attachShoal, createWebRtcSignaling } = await import('/lib/shoal-hlsjs/shoal-hlsjs.browser.js');
  const options = {
    // Bytes from peers reach the player only after their SHA-256 matches the origin's manifest.
    integrityManifestUrl: `${config.originUrl}/${streamName}/segments-sha256.json`,
  };
  if (params.get('corrupt') === '1') {
    options.signaling = corruptingSignaling(createWebRtcSignaling({ trackers: config.trackerUrls }));
  } else {
    options.trackers = config.trackerUrls;
  }
  demo.shoal = attachShoal(hls, options);
}
const shoal = demo.shoal;
hls.on(Hls.Events.ERROR, (_event, data) => {
  demo.errors.push({ type: data.type, details: data.details, fatal: data.fatal });
  if (data.fatal) {
    demo.fatalError = data.details;
    $('status').textContent = `fatal: ${data.details}`;
  }
});
// Stalls: every `waiting` after the first frame.
$('video').addEventListener('playing', () => {
  demo.firstFrameMs ??= performance.now();
});
$('video').addEventListener('waiting', () => {
  if (demo.firstFrameMs !== null) demo.stalls += 1;
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
  $('http-bytes').textContent = stats ? formatBytes(http) : 'P2P off';
  $('p2p-bytes').textContent = formatBytes(p2p);
  $('up-bytes').textContent = formatBytes(stats?.uploadBytes ?? 0);
  $('peers').textContent = String(stats?.peers ?? 0);
  $('p2p-share').textContent = http + p2p > 0 ? `${Math.round((100 * p2p) / (http + p2p))}%` : '–';
  const level = hls.levels[hls.currentLevel];
  $('level').textContent = level ? `${level.height}p · ${Math.round(level.bitrate / 1000)} kbit/s` : '–';
  $('latency').textContent = Number.isFinite(hls.latency) && streamName === 'live' ? `${hls.latency.toFixed(1)} s` : '–';
  if (!demo.fatalError) $('status').textContent = video.paused ? 'paused' : `playing ${video.currentTime.toFixed(1)} s`;
}, 1000);

/** A hostile viewer for tests: flips one payload byte in every data message it uploads. */
function corruptingSignaling(signaling) {
  const DATA = 0x05;
  const HEADER_BYTES = 13;
  return {
    get localPeerId() {
      return signaling.localPeerId;
    },
    join(infoHash, events) {
      return signaling.join(infoHash, {
        ...events,
        peer(transport) {
          const send = transport.send.bind(transport);
          transport.send = (message) => {
            if (message[0] === DATA && message.length > HEADER_BYTES) {
              const corrupted = message.slice();
              corrupted[HEADER_BYTES] ^= 0xff;
              return send(corrupted);
            }
            return send(message);
          };
          events.peer(transport);
        },
      });
    },
    destroy: () => signaling.destroy(),
  };
}
