// One swarm viewer: plays a stream with one engine and measures what a viewer experiences.
// The runner reads `window.swarmViewer.snapshot()`; every figure is measured here, in the page.
// Query: src, engine, p2p=0|1, upload=0|1 (0: the engine uploads nothing to peers), trackers
// (comma-separated), maxBufferLength, liveSyncDurationCount, worker=0|1, level (-1: ABR),
// iceServers (JSON, default []), integrity (a SHA-256 manifest URL: segments from peers are
// verified against it by the engine, and every segment handed to hls.js by this page; absent: not
// verified), trace=1 (a timestamped log of hls.js's fragment events, stalls with the buffer around
// them and, for Shoal, its engine log, drained by each snapshot as `traceLines`).
import { peerConnectionCounts, peerConnectionsByRemote } from './peer-connections.js';
import { createEngine, fragmentBytes } from './swarm-engines.js';
import { timerLagSnapshot } from './timer-lag.js';

const params = new URLSearchParams(location.search);
const numberParam = (name, fallback) => (params.has(name) ? Number(params.get(name)) : fallback);
const engineName = params.get('engine') ?? 'http';
const p2p = params.get('p2p') !== '0';
const upload = params.get('upload') !== '0';
const trackers = (params.get('trackers') ?? '').split(',').filter(Boolean);
const iceServers = JSON.parse(params.get('iceServers') ?? '[]');
const video = document.getElementById('video');
/** Trace lines not yet read by the runner (null: tracing off); capped so a stuck runner cannot grow it. */
const traceLines = params.get('trace') === '1' ? [] : null;
const trace = (text) => {
  if (traceLines && traceLines.length < 50_000) traceLines.push(`${new Date().toISOString().slice(11, 23)} ${text}`);
};
const bufferAhead = () => {
  const { buffered, currentTime } = video;
  for (let i = 0; i < buffered.length; i += 1) if (buffered.start(i) <= currentTime + 0.1 && currentTime < buffered.end(i)) return buffered.end(i) - currentTime;
  return 0;
};

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
  if (stall) {
    stall.endMs = now;
    trace(`stall ends after ${now - stall.startMs} ms at ${video.currentTime.toFixed(2)} s, ${bufferAhead().toFixed(2)} s buffered`);
  }
});
video.addEventListener('waiting', () => {
  if (state.firstFrameMs === null || state.ended || openStall()) return;
  state.stalls.push({ startMs: Date.now(), endMs: null, atS: video.currentTime });
  const ranges = [...Array(video.buffered.length).keys()].map((i) => `${video.buffered.start(i).toFixed(2)}-${video.buffered.end(i).toFixed(2)}`);
  trace(`stall at ${video.currentTime.toFixed(2)} s, buffered ${ranges.join(' ') || 'nothing'}`);
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

/**
 * Every media segment handed to hls.js, whatever its engine and source, checked against the
 * origin's SHA-256 manifest (PeerTube's format; live: refetched when it does not list a segment
 * yet). Independent of the engine's own checks: this is what the player got.
 */
const verification = { verified: 0, mismatched: 0, unlisted: 0, mismatchedSegments: [] };
function verifyingFragmentLoader(BaseLoader, manifestUrl) {
  let manifest = {};
  const hex = (buffer) => [...new Uint8Array(buffer)].map((byte) => byte.toString(16).padStart(2, '0')).join('');
  const check = async (url, bytes) => {
    const file = new URL(url, location.href).pathname.split('/').pop();
    if (!(file in manifest)) {
      const response = await fetch(manifestUrl, { cache: 'no-store' }).catch(() => null);
      if (response?.ok) manifest = await response.json();
    }
    const expected = manifest[file];
    if (typeof expected !== 'string') return void (verification.unlisted += 1);
    if (hex(await crypto.subtle.digest('SHA-256', bytes)) === expected) verification.verified += 1;
    else {
      verification.mismatched += 1;
      verification.mismatchedSegments.push(file);
    }
  };
  return class VerifyingLoader extends BaseLoader {
    load(context, config, callbacks) {
      if (!context.frag) return super.load(context, config, callbacks);
      return super.load(context, config, {
        ...callbacks,
        onSuccess: (response, ...rest) => {
          // Copied before hls.js may hand the buffer to its transmuxing worker.
          if (response.data instanceof ArrayBuffer) check(context.url, response.data.slice(0)).catch(() => (verification.unlisted += 1));
          callbacks.onSuccess(response, ...rest);
        },
      });
    }
  };
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
      connectionsByRemote: peerConnectionsByRemote(),
      verification: { ...verification, mismatchedSegments: verification.mismatchedSegments.slice(-20) },
      // Chromium's (coarse) JS heap figure, for the soak's memory curve.
      heapBytes: performance.memory?.usedJSHeapSize ?? null,
      timerLag: timerLagSnapshot(),
      segments: Object.fromEntries([...state.fragments].map(([key, fragment]) => [key, fragment.bytes])),
      ...(traceLines ? { traceLines: traceLines.splice(0) } : {}),
    };
  },
};

try {
  engine = await createEngine(engineName, { p2p, upload, trackers, iceServers, integrityManifestUrl: params.get('integrity') || undefined, trace: traceLines ? trace : null });
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
  const manifestUrl = params.get('integrity');
  if (manifestUrl) hls.config.fLoader = verifyingFragmentLoader(hls.config.fLoader ?? hls.config.loader, manifestUrl);
  const Events = hls.constructor.Events ?? globalThis.Hls.Events;
  hls.on(Events.FRAG_LOADED, (_event, data) => {
    if (data.frag.type !== 'main') return;
    const bytes = fragmentBytes(data);
    state.deliveredBytes += bytes;
    state.fragments.set(`${data.frag.level}:${data.frag.sn}`, { bytes, start: data.frag.start, end: data.frag.end });
  });
  if (traceLines) {
    hls.on(Events.FRAG_LOADING, (_event, data) => trace(`hls.js loads ${data.frag.level}:${data.frag.sn} (${data.frag.start.toFixed(2)} s), at ${video.currentTime.toFixed(2)} s, ${bufferAhead().toFixed(2)} s buffered`));
    hls.on(Events.FRAG_LOADED, (_event, data) => {
      const { loading } = data.frag.stats;
      trace(`hls.js got ${data.frag.level}:${data.frag.sn}: ${fragmentBytes(data)} bytes in ${Math.round(loading.end - loading.start)} ms, ${bufferAhead().toFixed(2)} s buffered`);
    });
    hls.on(Events.LEVEL_SWITCHING, (_event, data) => trace(`hls.js switches to level ${data.level}`));
  }
  hls.on(Events.FRAG_BUFFERED, (_event, data) => {
    // hls.js aligns a fragment's start to its PTS once parsed; keep the buffered position.
    const fragment = state.fragments.get(`${data.frag.level}:${data.frag.sn}`);
    if (fragment) Object.assign(fragment, { start: data.frag.start, end: data.frag.end });
  });
  hls.on(Events.ERROR, (_event, data) => {
    state.errors.push({ atMs: Date.now(), type: data.type, details: data.details, fatal: data.fatal });
    trace(`hls.js error ${data.details}${data.fatal ? ' (fatal)' : ''}`);
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
