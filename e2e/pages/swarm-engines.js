// The three ways a swarm viewer fetches segments. Each engine returns the hls.js class to build,
// the config to add to the shared hls.js settings, and counters the runner reads:
// { httpBytes, p2pBytes, uploadedBytes, peers } — bytes of media segments only (Shoal adds its
// control bytes sent and its upload pace).
import Hls from 'hls.js';

/** hls.js alone (the baseline): every segment over HTTP, counted by hls.js's own loader. */
function createHttpEngine() {
  const counters = { httpBytes: 0, p2pBytes: 0, uploadedBytes: 0, peers: 0 };
  return {
    name: 'http',
    Hls,
    hlsConfig: { loader: countingFragmentLoader((bytes) => (counters.httpBytes += bytes)) },
    attach() {},
    counters: () => ({ ...counters }),
    destroy() {},
  };
}

/**
 * p2p-media-loader-hlsjs 2.3.1, configured the way its README shows, against our tracker.
 * Counters come from its core's onChunkDownloaded / onChunkUploaded events.
 */
async function createP2pMediaLoaderEngine({ upload, trackers, iceServers, integrityManifestUrl, settings = {} }) {
  const { HlsJsP2PEngine } = await import('p2p-media-loader-hlsjs');
  const counters = { httpBytes: 0, p2pBytes: 0, uploadedBytes: 0, peers: 0 };
  const peerIds = new Set();
  return {
    name: 'p2p-media-loader',
    Hls: HlsJsP2PEngine.injectMixin(Hls),
    hlsConfig: {
      // Segments its core does not take are loaded by hls.js's own loader: count those too.
      loader: countingFragmentLoader((bytes) => (counters.httpBytes += bytes)),
      p2p: {
        core: {
          announceTrackers: trackers,
          rtcConfig: { iceServers },
          ...(upload ? {} : { isP2PUploadDisabled: true }),
          ...settings,
          ...(integrityManifestUrl ? { validateP2PSegment: sha256Validator(integrityManifestUrl) } : {}),
        },
        onHlsJsCreated(hls) {
          hls.p2pEngine.addEventListener('onChunkDownloaded', (bytes, source) => {
            if (source === 'p2p') counters.p2pBytes += bytes;
            else counters.httpBytes += bytes;
          });
          hls.p2pEngine.addEventListener('onChunkUploaded', (bytes) => {
            counters.uploadedBytes += bytes;
          });
          hls.p2pEngine.addEventListener('onPeerConnect', ({ peerId }) => peerIds.add(peerId));
          hls.p2pEngine.addEventListener('onPeerClose', ({ peerId }) => peerIds.delete(peerId));
        },
      },
    },
    attach() {},
    counters: () => ({ ...counters, peers: peerIds.size }),
    destroy() {},
  };
}

/**
 * p2p-media-loader's validateP2PSegment against a SHA-256 manifest in PeerTube's format
 * ({file name: hex digest}), as PeerTube wires it: the manifest is fetched again (live: it moves)
 * when it does not list the segment yet. A segment it never lists is rejected.
 */
function sha256Validator(manifestUrl) {
  let manifest = null;
  const refresh = async () => {
    const response = await fetch(manifestUrl, { cache: 'no-store' });
    manifest = response.ok ? await response.json() : {};
  };
  return async (url, _byteRange, data) => {
    const file = new URL(url).pathname.split('/').pop();
    if (!manifest || !(file in manifest)) await refresh();
    const expected = manifest[file];
    if (typeof expected !== 'string') return false;
    const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', data));
    return [...digest].map((byte) => byte.toString(16).padStart(2, '0')).join('') === expected;
  };
}

/**
 * hls.js's default loader, reporting the body bytes of every fragment it loads, including what
 * arrived before an abort (the origin counts those bytes too).
 */
function countingFragmentLoader(onFragmentBytes) {
  const BaseLoader = Hls.DefaultConfig.loader;
  return class CountingLoader extends BaseLoader {
    #counted = true;
    load(context, config, callbacks) {
      if (!context.frag) return super.load(context, config, callbacks);
      this.#counted = false;
      const count = (bytes) => {
        if (this.#counted) return;
        this.#counted = true;
        onFragmentBytes(bytes);
      };
      return super.load(context, config, {
        ...callbacks,
        onSuccess: (response, stats, ...rest) => {
          count(stats.loaded || response.data?.byteLength || 0);
          callbacks.onSuccess(response, stats, ...rest);
        },
        onError: (error, context, networkDetails, stats) => {
          count(stats?.loaded ?? 0);
          callbacks.onError(error, context, networkDetails, stats);
        },
        onTimeout: (stats, ...rest) => {
          count(stats?.loaded ?? 0);
          callbacks.onTimeout(stats, ...rest);
        },
      });
    }
    #countPartial() {
      if (this.#counted) return;
      this.#counted = true;
      onFragmentBytes(this.stats?.loaded ?? 0);
    }
    abort() {
      this.#countPartial();
      super.abort();
    }
    destroy() {
      this.#countPartial();
      super.destroy();
    }
  };
}

// ---- Shoal glue: the only place that knows @shoal/hlsjs's API. ------------------------------
/** hls.js + @shoal/hlsjs, from its browser bundle (packages/hlsjs/dist/shoal-hlsjs.browser.js). */
async function createShoalEngine({ upload, trackers, iceServers, integrityManifestUrl, trace }) {
  const { attachShoal, enableLogging } = await import('/lib/shoal-hlsjs/shoal-hlsjs.browser.js');
  if (trace) {
    enableLogging('shoal:*', (namespace, message, ...details) => {
      // The engine logs printf-style (%s, %d) or with trailing details (a stream key: its rendition only).
      const text = message.replace(/%[sd]/g, () => String(details.shift()));
      trace(`${namespace} ${text}${details.length ? ` ${details.map((detail) => String(detail).replace(/^.*\|bw=(\d+).*$/, 'bw=$1')).join(' ')}` : ''}`);
    });
  }
  // Fragments Shoal hands back to hls.js's own loader (none expected) still count as HTTP bytes.
  let fallbackHttpBytes = 0;
  let shoal = null;
  let traceTimer;
  /** Peers this viewer banned: { peerId, reason, atMs }. */
  const bans = [];
  return {
    name: 'shoal',
    Hls,
    hlsConfig: { loader: countingFragmentLoader((bytes) => (fallbackHttpBytes += bytes)) },
    attach(hls) {
      shoal = attachShoal(hls, { trackers, iceServers, upload, ...(integrityManifestUrl ? { integrityManifestUrl } : {}) });
      shoal.on('peer-banned', ({ peerId, reason }) => bans.push({ peerId, reason, atMs: Date.now() }));
      if (trace) {
        // The upload governor twice a second: what it let out, and what it measured of the uplink.
        let uploaded = 0;
        traceTimer = setInterval(() => {
          const stats = shoal.getStats();
          const { paceBytesPerS, queueDelayMs, yielding, downloadReserveBytesPerS } = stats.upload;
          const reserve = downloadReserveBytesPerS > 0 ? `, ${Math.round(downloadReserveBytesPerS / 1000)} kB/s of it left to downloads` : '';
          trace(`upload: ${stats.uploadBytes - uploaded} bytes sent, pace ${Math.round(paceBytesPerS / 1000)} kB/s${reserve}, uplink queue ${queueDelayMs === undefined ? '-' : Math.round(queueDelayMs)} ms${yielding ? ', yielding to playback' : ''}`);
          uploaded = stats.uploadBytes;
        }, 500);
      }
    },
    counters() {
      const stats = shoal?.getStats();
      return {
        httpBytes: (stats?.httpBytes ?? 0) + fallbackHttpBytes,
        p2pBytes: stats?.p2pBytes ?? 0,
        uploadedBytes: stats?.uploadBytes ?? 0,
        controlBytes: stats?.controlBytes ?? 0,
        // The upload governor's pace now, and the rate its pings tell peers (0.9 × its estimate of the link).
        uploadPaceBytesPerS: stats?.upload.paceBytesPerS ?? null,
        uploadAdvertisedBytesPerS: stats?.upload.advertisedBytesPerS ?? null,
        peers: stats?.peers ?? 0,
        storeBytes: stats?.storeBytes ?? null,
        bans: bans.slice(),
      };
    },
    destroy() {
      clearInterval(traceTimer);
      shoal?.destroy();
    },
  };
}
// ---- end of Shoal glue ----------------------------------------------------------------------

/**
 * Body bytes of a loaded fragment. From the loader's stats: by the time a listener runs, hls.js may
 * already have transferred (detached) the payload to its transmuxing worker.
 */
export function fragmentBytes(data) {
  return data.frag?.stats?.loaded || data.payload?.byteLength || 0;
}

/**
 * `engine`: 'http' | 'shoal' | 'p2p-media-loader' | 'p2p-media-loader-peertube' (PeerTube's live
 * settings). A viewer with P2P off always gets 'http'. `options.upload` false: the engine uploads
 * nothing to peers (Shoal's `upload: false`, p2p-media-loader's `isP2PUploadDisabled`).
 * `options.trace`: a function taking log lines (Shoal: its engine log), or null.
 */
export async function createEngine(engine, options) {
  if (engine === 'http' || !options.p2p) return createHttpEngine();
  if (engine === 'p2p-media-loader') return createP2pMediaLoaderEngine(options);
  if (engine === 'p2p-media-loader-peertube') return createP2pMediaLoaderEngine({ ...options, settings: { highDemandTimeWindow: 4 } });
  if (engine === 'shoal') return createShoalEngine(options);
  throw new Error(`unknown engine "${engine}" (http | shoal | p2p-media-loader)`);
}
