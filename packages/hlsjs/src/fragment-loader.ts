// The fragment loader class hls.js constructs for every fragment (config.fLoader). Media
// segments of the main rendition load through the engine; everything else (init segments,
// alternate audio and subtitles, LL-HLS parts) goes to the loader hls.js would have used.
import { isShoalError, type LoadResult, type SegmentLoad, type SegmentRef } from '@shoal/core';
import type {
  FragmentLoaderContext,
  HlsConfig,
  Loader,
  LoaderCallbacks,
  LoaderConfiguration,
  LoaderContext,
  LoaderStats,
} from 'hls.js';
import type { ReportedTiming } from './loader-stats.js';

/** What the loader needs from the integration; one per attached hls.js instance. */
export interface FragmentLoaderHost {
  /** The loader hls.js would use for this fragment (the integrator's fLoader, or config.loader). */
  readonly fallback: new (config: HlsConfig) => Loader<LoaderContext>;
  /** The engine's reference for this fragment, or undefined to use the fallback. */
  segmentFor(context: FragmentLoaderContext): SegmentRef | undefined;
  loadSegment(ref: SegmentRef): SegmentLoad;
  /** Something went wrong inside Shoal that the load survived (it went to the fallback). */
  warn(message: string): void;
  /** Timings to report to hls.js's ABR (see loader-stats.ts); origin times are performance.now(). */
  timing(bytes: number, originRequest: { startMs: number; firstByteMs: number } | undefined): ReportedTiming;
}

export type FragmentLoaderClass = new (config: HlsConfig) => Loader<FragmentLoaderContext>;

const newStats = (): LoaderStats => ({
  aborted: false,
  loaded: 0,
  retry: 0,
  total: 0,
  chunkCount: 0,
  bwEstimate: 0,
  loading: { start: 0, first: 0, end: 0 },
  parsing: { start: 0, end: 0 },
  buffering: { start: 0, first: 0, end: 0 },
});

/** A copy that owns its whole buffer, so hls.js may transfer it to its worker. */
function ownBuffer(bytes: Uint8Array): ArrayBuffer {
  if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer) return bytes.buffer;
  return bytes.slice().buffer as ArrayBuffer;
}

export function createFragmentLoaderClass(host: FragmentLoaderHost): FragmentLoaderClass {
  return class ShoalFragmentLoader implements Loader<FragmentLoaderContext> {
    context: FragmentLoaderContext | null = null;
    stats: LoaderStats = newStats();
    private fallbackLoader: Loader<LoaderContext> | undefined;
    private load_: SegmentLoad | undefined;
    private callbacks: LoaderCallbacks<FragmentLoaderContext> | null = null;
    private timeout: ReturnType<typeof setTimeout> | undefined;

    constructor(private readonly config: HlsConfig) {}

    load(context: FragmentLoaderContext, config: LoaderConfiguration, callbacks: LoaderCallbacks<FragmentLoaderContext>): void {
      this.context = context;
      const ref = host.segmentFor(context);
      let load: SegmentLoad | undefined;
      try {
        if (ref) load = host.loadSegment(ref);
      } catch (error) {
        // Shoal must never stop a load hls.js alone would make: this one goes the plain way.
        host.warn(`segment ${ref?.sequence} went to hls.js's own loader: ${error instanceof Error ? error.message : String(error)}`);
      }
      if (!load) {
        const fallback = (this.fallbackLoader = new host.fallback(this.config));
        // hls.js reads frag.stats, which is this loader's stats: the fallback must fill the same object.
        fallback.stats = this.stats;
        fallback.load(context, config, callbacks as unknown as LoaderCallbacks<LoaderContext>);
        return;
      }
      this.load_ = load;
      this.callbacks = callbacks;
      const stats = this.stats;
      const requestMs = performance.now();
      stats.loading.start = requestMs;
      const maxLoadTimeMs = config.loadPolicy?.maxLoadTimeMs ?? config.timeout;
      if (maxLoadTimeMs > 0 && Number.isFinite(maxLoadTimeMs)) {
        this.timeout = setTimeout(() => {
          const timedOut = this.callbacks;
          this.cancel();
          timedOut?.onTimeout(stats, context, null);
        }, maxLoadTimeMs);
      }
      load.result.then(
        (result) => this.succeed(result, requestMs),
        (error: unknown) => {
          const failed = this.callbacks;
          if (!failed || load !== this.load_) return;
          this.finish();
          const code = Number(/HTTP (\d{3})/.exec(String((error as Error)?.message))?.[1] ?? 0);
          const text = error instanceof Error ? error.message : String(error);
          // ABORTED here means the engine gave up on it; hls.js retries like any failed load.
          failed.onError({ code, text: isShoalError(error) ? text : `shoal: ${text}` }, context, null, stats);
        },
      );
    }

    abort(): void {
      if (this.fallbackLoader) return this.fallbackLoader.abort();
      const aborted = this.callbacks;
      if (!aborted || !this.context) return;
      this.stats.aborted = true;
      this.cancel();
      aborted.onAbort?.(this.stats, this.context, null);
    }

    destroy(): void {
      if (this.fallbackLoader) this.fallbackLoader.destroy();
      else this.cancel();
      this.fallbackLoader = undefined;
      this.context = null;
    }

    private succeed(result: LoadResult, requestMs: number): void {
      const callbacks = this.callbacks;
      const context = this.context;
      if (!callbacks || !context) return;
      this.finish();
      const { stats } = this;
      const bytes = result.bytes.byteLength;
      // The engine's times, moved onto this loader's clock; a request made before hls.js asked is left out.
      const { origin, requestMs: engineRequestMs } = result.timing;
      const originRequest =
        origin && origin.requestMs >= engineRequestMs
          ? { startMs: requestMs + (origin.requestMs - engineRequestMs), firstByteMs: requestMs + (origin.firstByteMs - engineRequestMs) }
          : undefined;
      const timing = host.timing(bytes, originRequest);
      stats.loading = timing.loading;
      // hls.js leaves aborted loads out of its bandwidth estimate (abr-controller onFragBuffered), and
      // nothing else of a completed load reads the flag.
      stats.aborted = !timing.sampled;
      stats.loaded = stats.total = bytes;
      stats.chunkCount = 1;
      const data = ownBuffer(result.bytes);
      // hls.js transmuxes what arrives through onProgress; onSuccess only completes the load.
      callbacks.onProgress?.(stats, context, data, null);
      callbacks.onSuccess({ url: context.url, data, code: 200 }, stats, context, null);
    }

    private cancel(): void {
      const load = this.load_;
      this.finish();
      load?.abort();
    }

    private finish(): void {
      clearTimeout(this.timeout);
      this.timeout = undefined;
      this.load_ = undefined;
      this.callbacks = null;
    }
  };
}

