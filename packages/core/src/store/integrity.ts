// Verification of bytes that came from peers: the integrator's validateSegment callback and/or a
// SHA-256 manifest in PeerTube's format ({file: sha256} or {file: {"start-end": sha256}}, with
// an inclusive end as in an HTTP Range header), or else the SHA-256 digest the origin itself sends
// (RFC 9530 Repr-Digest).
//
// How a receiver learns the origin's digest of a segment it got from peers: from an origin response
// for that URL it already had (a Range resume after peer bytes carries Repr-Digest, which covers the
// whole file, not the range), else from a HEAD of the segment's URL, asked only once the origin has
// shown it sends digests at all (so origins without them, and the simulator, see no extra
// requests). A HEAD is the cheapest request that carries the header: no body, one round trip.
// Measured on the e2e origin: its HEAD answer is 344 header bytes, 413 with a Repr-Digest line,
// plus the browser's request (a few hundred bytes up, not measured), against the sample's 2 s
// segments of 83 KB (180p) and 184 KB (360p): under 1% of a segment's bytes, and one request per segment from peers. It is bounded in time and its
// result kept per URL. A cross-origin page reads the header only if the origin lists it in
// Access-Control-Expose-Headers. An object store's MD5 ETag
// is not used: Web Crypto has no MD5, and a multipart upload's ETag is no digest of the bytes.
import { ShoalError } from '../errors.js';
import { toHex } from '../identity.js';
import type { SegmentValidator } from '../options.js';
import type { Clock, HttpClient, SegmentRef } from '../types.js';

/** `unverifiable`: a manifest is configured but has no entry for the segment (yet), or verification is required and nothing could check it. */
export type Verdict = 'valid' | 'invalid' | 'unverifiable';

/** What checks peers' bytes: the integrator's callback, the SHA-256 manifest, the origin's digests, or nothing. */
export type Verification = 'validator' | 'manifest' | 'digest' | 'none';

export type Sha256 = (bytes: Uint8Array) => Promise<Uint8Array>;

export const webCryptoSha256: Sha256 = async (bytes) =>
  new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>));

type ManifestEntry = string | Record<string, string>;
type Manifest = Record<string, ManifestEntry>;

/** A live manifest grows: an entry missing from the copy we have is fetched again, at most this often. */
const MANIFEST_REFRESH_MS = 2000;
/** A HEAD for a segment's digest that takes longer is given up: the copy is then unverified. */
const DIGEST_HEAD_MS = 2000;
/** Segment URLs whose origin digest is kept (live URLs keep coming). */
const DIGESTS_KEPT = 256;

function fileName(url: string): string {
  const path = url.replace(/[?#].*$/, '');
  return path.slice(path.lastIndexOf('/') + 1);
}

export class SegmentVerifier {
  private manifest: Promise<Manifest> | undefined;
  private manifestFetchedMs = -Infinity;
  /** Base64 SHA-256 by segment URL, as origin responses said. */
  private readonly digests = new Map<string, string>();
  /** Whether the origin sends digests: unknown until its first response. */
  private originDigests: boolean | undefined;
  /** Told when `method` changes (the origin turned out to send digests). */
  onMethodChange = () => {};

  constructor(
    private readonly validateSegment: SegmentValidator | undefined,
    private readonly manifestUrl: string | undefined,
    private readonly http: HttpClient,
    private readonly clock: Clock,
    private readonly sha256: Sha256,
    private readonly warn: (message: string) => void,
    private readonly requireVerified = false,
  ) {}

  get method(): Verification {
    if (this.validateSegment) return 'validator';
    if (this.manifestUrl) return 'manifest';
    return this.originDigests ? 'digest' : 'none';
  }

  /**
   * An origin response's headers for `url`: keeps its Repr-Digest (of the whole file, also on a
   * Range response). Content-Digest is not read: it covers only the bytes of that response, which
   * for a Range resume is not the segment, and origins that send it on whole bodies send Repr-Digest too.
   */
  observe(url: string, header: (name: string) => string | null): void {
    // An RFC 9530 dictionary (`sha-256=:<base64>:, sha-512=:…:`): its sha-256 member.
    const digest = /sha-256=:([^:]+):/i.exec(header('repr-digest') ?? '')?.[1];
    if (digest === undefined) {
      this.originDigests ??= false;
      return;
    }
    if (this.digests.size >= DIGESTS_KEPT) this.digests.clear();
    this.digests.set(url, digest);
    if (!this.originDigests) {
      this.originDigests = true;
      this.onMethodChange();
    }
  }

  /** When verify() may fetch the manifest again: a segment missing from it now may be listed by then. */
  get nextRefreshMs(): number {
    return this.manifestFetchedMs + MANIFEST_REFRESH_MS;
  }

  /** requireVerifiedP2P is set and nothing can verify peers' bytes: ask peers for nothing. */
  get refusesP2P(): boolean {
    return this.requireVerified && this.method === 'none';
  }

  get enabled(): boolean {
    return this.method !== 'none' || this.requireVerified;
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
    if (!this.manifestUrl) {
      const digest = ref.byteRange ? undefined : await this.originDigest(ref.url);
      if (digest === undefined) return this.requireVerified ? 'unverifiable' : 'valid';
      return btoa(String.fromCharCode(...(await this.sha256(bytes)))) === digest ? 'valid' : 'invalid';
    }
    let expected = await this.expectedHash(ref, false);
    if (expected === undefined) expected = await this.expectedHash(ref, true);
    if (expected === undefined) return 'unverifiable';
    return toHex(await this.sha256(bytes)) === expected.toLowerCase() ? 'valid' : 'invalid';
  }

  /** The origin's digest of the whole file at `url`: known from an earlier response, or asked with a HEAD. */
  private async originDigest(url: string): Promise<string | undefined> {
    if (!this.digests.has(url) && this.originDigests) {
      const head = this.http.fetch({ url, head: true, onHeaders: (header) => this.observe(url, header) });
      const timer = this.clock.setTimeout(() => head.abort(), DIGEST_HEAD_MS);
      // A HEAD that fails or times out leaves the copy without a digest: refused or unverified as requireVerifiedP2P says, never stuck.
      await head.body.catch(() => undefined);
      this.clock.clearTimeout(timer);
    }
    return this.digests.get(url);
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
      this.warn(`integrity manifest ${this.manifestUrl}: ${String(error)}; peers' segments come over HTTP`);
      return {};
    }
  }
}
