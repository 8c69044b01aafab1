// The real HttpClient (global fetch: browsers and Node >= 18). Everything else in the engine
// reaches the network only through this interface (and time through a Clock: real-clock.ts).
import { ShoalError } from '../errors.js';
import type { HttpClient, HttpRequest, HttpTransfer } from '../types.js';

export interface FetchHttpClientOptions {
  /** Sent with every request (credentials: 'include' for cookie-protected origins). */
  credentials?: RequestCredentials;
  headers?: Record<string, string>;
}

/** An HttpClient on global fetch: Range requests, streamed progress, abort. */
export class FetchHttpClient implements HttpClient {
  constructor(private readonly options: FetchHttpClientOptions = {}) {}

  fetch(request: HttpRequest): HttpTransfer {
    const controller = new AbortController();
    const body = this.run(request, controller.signal);
    body.catch(() => {}); // the caller owns the rejection; this only avoids an unhandled-rejection report on abort
    return { body, abort: () => controller.abort() };
  }

  private async run(request: HttpRequest, signal: AbortSignal): Promise<Uint8Array> {
    const { url, range, onData, onLength, revalidate, head } = request;
    const headers: Record<string, string> = { ...this.options.headers };
    if (range) headers.Range = `bytes=${range.start}-${range.end - 1}`;
    let response: Response;
    try {
      response = await fetch(url, {
        headers,
        signal,
        ...(head ? { method: 'HEAD' } : {}),
        ...(revalidate ? { cache: 'no-cache' as const } : {}),
        ...(this.options.credentials ? { credentials: this.options.credentials } : {}),
      });
    } catch (error) {
      throw signal.aborted
        ? new ShoalError('ABORTED', `${url}: aborted`)
        : new ShoalError('HTTP_NETWORK', `${url}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
    if (!response.ok) throw new ShoalError('HTTP_STATUS', `${url}: HTTP ${response.status}${range ? ` for bytes ${range.start}-${range.end - 1}` : ''}`);
    request.onHeaders?.((name) => response.headers.get(name));
    // A server that ignores Range answers 200 with the whole file: keep only the requested bytes.
    const skip = range && response.status === 200 ? range.start : 0;
    const want = range ? range.end - range.start : Infinity;
    // A compressed body's length is not the content's: only an identity body's is told.
    const declared = response.headers.get('content-encoding') ? NaN : Number(response.headers.get('content-length') ?? NaN);
    if (Number.isInteger(declared) && declared > 0) onLength?.(Math.min(declared - skip, want));
    const chunks: Uint8Array[] = [];
    let position = 0;
    let length = 0;
    try {
      const reader = response.body?.getReader();
      if (reader) {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          const from = Math.max(skip - position, 0);
          const to = Math.min(value.length, skip + want - position);
          position += value.length;
          if (to > from) {
            const chunk = from === 0 && to === value.length ? value : value.subarray(from, to);
            chunks.push(chunk);
            length += chunk.length;
            onData?.(chunk);
          }
          if (position >= skip + want) {
            void reader.cancel();
            break;
          }
        }
      } else {
        const whole = new Uint8Array(await response.arrayBuffer());
        const chunk = whole.subarray(skip, Math.min(whole.length, skip + want));
        chunks.push(chunk);
        length = chunk.length;
        onData?.(chunk);
      }
    } catch (error) {
      throw signal.aborted
        ? new ShoalError('ABORTED', `${url}: aborted`)
        : new ShoalError('HTTP_NETWORK', `${url}: body interrupted: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
    if (chunks.length === 1) return chunks[0]!;
    const bytes = new Uint8Array(length);
    let offset = 0;
    for (const chunk of chunks) {
      bytes.set(chunk, offset);
      offset += chunk.length;
    }
    return bytes;
  }
}
