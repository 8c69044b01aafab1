// One swarm viewer: plays a stream with one engine and measures what a viewer experiences.
// The runner reads `window.swarmViewer.snapshot()`; every figure is measured here, in the page.
// Query: src, engine, p2p=0|1, trackers (comma-separated), maxBufferLength, liveSyncDurationCount,
// worker=0|1, level (-1: ABR), iceServers (JSON, default []), integrity (a SHA-256 manifest URL:
// segments from peers are verified against it; absent: not verified).
import { peerConnectionCounts } from './peer-connections.js';
import { createEngine, fragmentBytes } from './swarm-engines.js';

const params = new URLSearchParams(location.search);
const numberParam = (name, fallback) => (params.has(name) ? Number(params.get(name)) : fallback);
const engineName = params.get('engine') ?? 'http';
const p2p = params.get('p2p') !== '0';
const trackers = (params.get('trackers') ?? '').split(',').filter(Boolean);
const iceServers = JSON.parse(params.get('iceServers') ?? '[]');
const video = document.getElementById('video');

const state = {
  engine: engineName,
  p2p,
  /** Epoch ms of navigation start; every other time below is epoch ms too. */
  navigationStartMs: Math.round(performance.timeOrigin),
  firstFrameMs: null,
  stalls: [],
  errors: [],
  fatalError: null,
  /** `${level}:${sn}` → { bytes, start, end } for every media segment handed to hls.js. */
  fragments: new Map(),
  deliveredBytes: 0,
  latencySamples: [],
  bitrateSamples: [],
  ended: false,
};
let engine = null;
let hls = null;

const openStall = () => state.stalls.find((stall) => stall.endMs === null);
video.addEventListener('playing', () => {
  const now = Date.now();
  if (state.firstFrameMs === null) state.firstFrameMs = now;
  const stall = openStall();
  if (stall) stall.endMs = now;
});
video.addEventListener('waiting', () => {
  if (state.firstFrameMs === null || state.ended || openStall()) return;
  state.stalls.push({ startMs: Date.now(), endMs: null, atS: video.currentTime });
});
video.addEventListener('ended', () => {
  state.ended = true;
  const stall = openStall();
  if (stall) stall.endMs = Date.now();
});

/** Bytes of fragments whose time range was at least half played. */
function playedBytes() {
  const played = video.played;
  let bytes = 0;
  for (const fragment of state.fragments.values()) {
    if (fragment.end <= fragment.start) continue;
    let overlap = 0;
    for (let i = 0; i < played.length; i += 1) {
      overlap += Math.max(0, Math.min(fragment.end, played.end(i)) - Math.max(fragment.start, played.start(i)));
    }
    if (overlap >= (fragment.end - fragment.start) / 2) bytes += fragment.bytes;
  }
  return bytes;
}

function playedSeconds() {
  let seconds = 0;
  for (let i = 0; i < video.played.length; i += 1) seconds += video.played.end(i) - video.played.start(i);
  return seconds;
}

window.swarmViewer = {
  snapshot() {
    const counters = engine ? engine.counters() : { httpBytes: 0, p2pBytes: 0, uploadedBytes: 0, peers: 0 };
    return {
      engine: engineName,
      p2p,
      atMs: Date.now(),
      navigationStartMs: state.navigationStartMs,
      firstFrameMs: state.firstFrameMs,
      stalls: state.stalls.map((stall) => ({ ...stall })),
      errors: state.errors.slice(-20),
      fatalError: state.fatalError,
      ...counters,
      deliveredBytes: state.deliveredBytes,
      playedBytes: playedBytes(),
      playedSeconds: playedSeconds(),
      currentTime: video.currentTime,
      latencySamples: state.latencySamples.slice(),
      bitrateSamples: state.bitrateSamples.slice(),
      ended: state.ended,
      workerEnabled: hls ? hls.config.enableWorker : null,
      connections: peerConnectionCounts(),
      segments: Object.fromEntries([...state.fragments].map(([key, fragment]) => [key, fragment.bytes])),
    };
  },
};

try {
  engine = await createEngine(engineName, { p2p, trackers, iceServers, integrityManifestUrl: params.get('integrity') || undefined });
  const hlsConfig = {
    // Worker off for p2p-media-loader: 2.3.1 hands peers detached (empty) buffers when hls.js
    // transfers segments to its transmuxing worker, so its users run without it.
    enableWorker: params.has('worker') ? params.get('worker') !== '0' : !engineName.startsWith('p2p-media-loader'),
    // Buffer settings are explicit and identical for every engine in a comparison: hls.js's
    // defaults reach far ahead at low bitrates.
    maxBufferLength: numberParam('maxBufferLength', 20),
    maxMaxBufferLength: numberParam('maxBufferLength', 20),
    liveSyncDurationCount: numberParam('liveSyncDurationCount', 5),
    startLevel: numberParam('level', -1),
    ...engine.hlsConfig,
  };
  hls = new engine.Hls(hlsConfig);
  engine.attach(hls);
  const Events = hls.constructor.Events ?? globalThis.Hls.Events;
  hls.on(Events.FRAG_LOADED, (_event, data) => {
    if (data.frag.type !== 'main') return;
    const bytes = fragmentBytes(data);
    state.deliveredBytes += bytes;
    state.fragments.set(`${data.frag.level}:${data.frag.sn}`, { bytes, start: data.frag.start, end: data.frag.end });
  });
  hls.on(Events.FRAG_BUFFERED, (_event, data) => {
    // hls.js aligns a fragment's start to its PTS once parsed; keep the buffered position.
    const fragment = state.fragments.get(`${data.frag.level}:${data.frag.sn}`);
    if (fragment) Object.assign(fragment, { start: data.frag.start, end: data.frag.end });
  });
  hls.on(Events.ERROR, (_event, data) => {
    state.errors.push({ atMs: Date.now(), type: data.type, details: data.details, fatal: data.fatal });
    if (data.fatal) state.fatalError = data.details;
  });
  const level = numberParam('level', -1);
  if (level >= 0) hls.on(Events.MANIFEST_PARSED, () => (hls.currentLevel = level));
  hls.loadSource(params.get('src'));
  hls.attachMedia(video);
  video.play().catch(() => {});
  setInterval(() => {
    if (video.paused || state.firstFrameMs === null || openStall()) return;
    const live = hls.levels[hls.currentLevel]?.details?.live;
    if (live && Number.isFinite(hls.latency) && hls.latency > 0) state.latencySamples.push(Math.round(hls.latency * 100) / 100);
    const current = hls.levels[hls.currentLevel];
    if (current) state.bitrateSamples.push(current.bitrate);
  }, 1000);
  window.swarmViewer.hls = hls;
} catch (error) {
  state.fatalError = `engine start failed: ${error?.message ?? error}`;
}
