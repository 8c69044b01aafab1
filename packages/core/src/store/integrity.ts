// Verification of bytes that came from peers: the integrator's validateSegment callback and/or a
// SHA-256 manifest in PeerTube's format ({file: sha256} or {file: {"start-end": sha256}}, with
// an inclusive end as in an HTTP Range header).
import { ShoalError } from '../errors.js';
import { toHex } from '../identity.js';
import type { SegmentValidator } from '../options.js';
import type { Clock, HttpClient, SegmentRef } from '../types.js';

/** `unverifiable`: a manifest is configured but has no entry for the segment (yet). */
export type Verdict = 'valid' | 'invalid' | 'unverifiable';

export type Sha256 = (bytes: Uint8Array) => Promise<Uint8Array>;

export const webCryptoSha256: Sha256 = async (bytes) =>
  new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>));

type ManifestEntry = string | Record<string, string>;
type Manifest = Record<string, ManifestEntry>;

/** A live manifest grows: an entry missing from the copy we have is fetched again, at most this often. */
const MANIFEST_REFRESH_MS = 2000;

function fileName(url: string): string {
  const path = url.replace(/[?#].*$/, '');
  return path.slice(path.lastIndexOf('/') + 1);
}

export class SegmentVerifier {
  private manifest: Promise<Manifest> | undefined;
  private manifestFetchedMs = -Infinity;

  constructor(
    private readonly validateSegment: SegmentValidator | undefined,
    private readonly manifestUrl: string | undefined,
    private readonly http: HttpClient,
    private readonly clock: Clock,
    private readonly sha256: Sha256,
    private readonly warn: (message: string) => void,
  ) {}

  /** When verify() may fetch the manifest again: a segment missing from it now may be listed by then. */
  get nextRefreshMs(): number {
    return this.manifestFetchedMs + MANIFEST_REFRESH_MS;
  }

  get enabled(): boolean {
    return this.validateSegment !== undefined || this.manifestUrl !== undefined;
  }

  /**
   * The callback decides when it answers true or false; `undefined` defers to the manifest;
   * with neither an answer nor a manifest, the segment is accepted (as with no integrity set up).
   * A callback that throws or rejects counts as `false`.
   */
  async verify(ref: SegmentRef, bytes: Uint8Array): Promise<Verdict> {
    if (this.validateSegment) {
      let answer: boolean | undefined;
      try {
        answer = await this.validateSegment(ref, bytes);
      } catch (error) {
        this.warn(`validateSegment threw for ${ref.url} (${String(error)}): counted as invalid`);
        answer = false;
      }
      if (answer === true) return 'valid';
      if (answer === false) return 'invalid';
    }
    if (!this.manifestUrl) return 'valid';
    let expected = await this.expectedHash(ref, false);
    if (expected === undefined) expected = await this.expectedHash(ref, true);
    if (expected === undefined) return 'unverifiable';
    return toHex(await this.sha256(bytes)) === expected.toLowerCase() ? 'valid' : 'invalid';
  }

  private async expectedHash(ref: SegmentRef, refresh: boolean): Promise<string | undefined> {
    const now = this.clock.now();
    if (!this.manifest || (refresh && now >= this.nextRefreshMs)) {
      this.manifestFetchedMs = now;
      this.manifest = this.fetchManifest();
    }
    const entry = (await this.manifest)[fileName(ref.url)];
    if (typeof entry === 'string') return entry;
    if (entry && ref.byteRange) return entry[`${ref.byteRange.start}-${ref.byteRange.end - 1}`];
    return undefined;
  }

  private async fetchManifest(): Promise<Manifest> {
    try {
      const body = await this.http.fetch({ url: this.manifestUrl!, revalidate: true }).body;
      const parsed: unknown = JSON.parse(new TextDecoder().decode(body));
      if (typeof parsed !== 'object' || parsed === null) throw new ShoalError('INTEGRITY_MANIFEST', `${this.manifestUrl} is not a JSON object`);
      return parsed as Manifest;
    } catch (error) {
      // No manifest: P2P bytes are unverifiable and the engine falls back to HTTP.
      this.warn(`integrity manifest ${this.manifestUrl} unavailable (${String(error)}): segments from peers are refetched over HTTP`);
      return {};
    }
  }
}
