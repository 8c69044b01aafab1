// The browser tests' viewer (served at /test/ beside the demo's pages): hls.js, plus Shoal unless
// ?p2p=0, playing the demo origin's stream, with what the tests read in `window.testViewer`.
// Query: stream=live|vod, p2p=0|1, worker=0|1, corrupt=1 (this viewer uploads corrupted bytes:
// for the test that peers verify segments and ban a bad peer).
import Hls from 'hls.js';

const params = new URLSearchParams(location.search);
const streamName = params.get('stream') === 'vod' ? 'vod' : 'live';
const config = await (await fetch('/config.json')).json();
const video = document.getElementById('video');

const viewer = { errors: [], fatalError: null, hls: null, shoal: null, stalls: 0, firstFrameMs: null };
window.testViewer = viewer;

const hls = new Hls({ enableWorker: params.get('worker') !== '0', maxBufferLength: 20, liveSyncDurationCount: 5 });
viewer.hls = hls;
if (params.get('p2p') !== '0') {
  const { attachShoal, createWebRtcSignaling } = await import('/lib/shoal-hlsjs/shoal-hlsjs.browser.js');
  const options = { integrityManifestUrl: `${config.originUrl}/${streamName}/segments-sha256.json` };
  if (params.get('corrupt') === '1') options.signaling = corruptingSignaling(createWebRtcSignaling({ trackers: config.trackerUrls }));
  else options.trackers = config.trackerUrls;
  viewer.shoal = attachShoal(hls, options);
}
hls.on(Hls.Events.ERROR, (_event, data) => {
  viewer.errors.push({ type: data.type, details: data.details, fatal: data.fatal });
  if (data.fatal) viewer.fatalError = data.details;
});
video.addEventListener('playing', () => {
  viewer.firstFrameMs ??= performance.now();
});
// Stalls: every `waiting` after the first frame.
video.addEventListener('waiting', () => {
  if (viewer.firstFrameMs !== null) viewer.stalls += 1;
});
hls.loadSource(`${config.originUrl}/${streamName}/master.m3u8`);
hls.attachMedia(video);
video.play().catch(() => {});

/** A hostile viewer: flips one payload byte in every data message it uploads. */
function corruptingSignaling(signaling) {
  const DATA = 0x05; // the wire's data message (packages/core/PROTOCOL.md) and its header size
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
            if (message[0] !== DATA || message.length <= HEADER_BYTES) return send(message);
            const corrupted = message.slice();
            corrupted[HEADER_BYTES] ^= 0xff;
            return send(corrupted);
          };
          events.peer(transport);
        },
      });
    },
    destroy: () => signaling.destroy(),
  };
}
