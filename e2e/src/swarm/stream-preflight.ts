// The check of an external stream (--stream) before any browser starts: fetch its master
// playlist, a media playlist and one segment the way the viewer pages will, from a page on
// another origin (an Origin header; the answer must carry Access-Control-Allow-Origin), and a
// Range request as Shoal sends one when it resumes a segment over HTTP. Each finding names what
// is missing and the header or setting that fixes it. The stream's kind (VOD or live) is read
// from its media playlist, for the scenario to match.
import { parseMediaPlaylist } from '../hls-playlist.js';
import { scenarios, type Scenario, type StreamKind } from './scenarios.js';

/**
 * The Origin the checks send. The viewer pages are served from 127.0.0.1 on a port of their own,
 * another origin than any stream's: a server must allow any origin (`*`) or echo the request's.
 */
export const PREFLIGHT_ORIGIN = 'http://127.0.0.1:9';
const REQUEST_TIMEOUT_MS = 10_000;

export interface PreflightFinding {
  /** error: no viewer can play the stream; warning: it plays, with something lost (said). */
  level: 'error' | 'warning';
  url: string;
  /** What is missing or wrong. */
  problem: string;
  /** What to change on the server. */
  fix: string;
}

export interface StreamPreflight {
  masterUrl: string;
  mediaPlaylistUrl: string | null;
  segmentUrl: string | null;
  /** null when no media playlist could be read. */
  kind: StreamKind | null;
  /** Why the kind is what it is (the tag that decided it). */
  kindReason: string;
  findings: PreflightFinding[];
  /** No error-level finding: the viewer pages can load the stream. */
  playable: boolean;
}

interface Fetched {
  status: number;
  headers: Headers;
  body: string;
}

const corsFix = 'make the stream\'s server send `Access-Control-Allow-Origin: *` with every playlist and segment (or echo the request\'s Origin header)';

async function request(url: string, headers: Record<string, string>, method = 'GET', readBody = true): Promise<Fetched | { error: string }> {
  try {
    const response = await fetch(url, { method, headers, redirect: 'follow', signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    // A playlist is read whole; a segment (maybe a whole file, where Range is ignored) is not.
    const body = readBody ? await response.text() : '';
    if (!readBody) await response.body?.cancel();
    return { status: response.status, headers: response.headers, body };
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const reason = (error as Error).name === 'TimeoutError' ? `no answer within ${REQUEST_TIMEOUT_MS / 1000} s` : (cause?.code ?? cause?.message ?? (error as Error).message);
    return { error: reason };
  }
}

/** The CORS finding for one answer, or null when a page on PREFLIGHT_ORIGIN may read it. */
function corsFinding(url: string, what: string, headers: Headers): PreflightFinding | null {
  const allowed = headers.get('access-control-allow-origin');
  if (allowed === null) {
    return { level: 'error', url, problem: `the ${what} comes without an Access-Control-Allow-Origin header: a page on another origin (every viewer page) may not read it (CORS)`, fix: corsFix };
  }
  if (allowed.trim() !== '*' && allowed.trim() !== PREFLIGHT_ORIGIN) {
    return { level: 'error', url, problem: `the ${what} allows only the origin "${allowed}" (Access-Control-Allow-Origin), not the viewer pages' (CORS)`, fix: corsFix };
  }
  return null;
}

/** GETs a playlist as a viewer page would; findings go to `findings`; returns its text or null. */
async function fetchPlaylist(url: string, what: string, findings: PreflightFinding[]): Promise<string | null> {
  const answer = await request(url, { Origin: PREFLIGHT_ORIGIN });
  if ('error' in answer) {
    findings.push({ level: 'error', url, problem: `the ${what} could not be fetched: ${answer.error}`, fix: 'check the URL and that its server is running and reachable from this machine' });
    return null;
  }
  if (answer.status < 200 || answer.status > 299) {
    findings.push({ level: 'error', url, problem: `the ${what} answered HTTP ${answer.status}`, fix: 'check the URL' });
    return null;
  }
  const cors = corsFinding(url, what, answer.headers);
  if (cors) findings.push(cors);
  if (!answer.body.trimStart().startsWith('#EXTM3U')) {
    findings.push({ level: 'error', url, problem: `the ${what} is not an HLS playlist (its first line is not #EXTM3U)`, fix: 'give --stream the URL of the master (or media) playlist, .m3u8' });
    return null;
  }
  return answer.body;
}

/** The first variant's URI of a master playlist, or null for a media playlist. */
export function firstVariantUri(text: string): string | null {
  const lines = text.split(/\r?\n/).map((line) => line.trim());
  const index = lines.findIndex((line) => line.startsWith('#EXT-X-STREAM-INF'));
  if (index < 0) return null;
  return lines.slice(index + 1).find((line) => line !== '' && !line.startsWith('#')) ?? null;
}

/** VOD when the media playlist is complete (#EXT-X-ENDLIST) or says so (#EXT-X-PLAYLIST-TYPE:VOD); live otherwise. */
export function streamKindOf(mediaPlaylist: string): { kind: StreamKind; reason: string } {
  if (/^#EXT-X-PLAYLIST-TYPE:\s*VOD\s*$/m.test(mediaPlaylist)) return { kind: 'vod', reason: 'its media playlist says #EXT-X-PLAYLIST-TYPE:VOD' };
  if (/^#EXT-X-ENDLIST\s*$/m.test(mediaPlaylist)) return { kind: 'vod', reason: 'its media playlist ends with #EXT-X-ENDLIST' };
  return { kind: 'live', reason: 'its media playlist has no #EXT-X-ENDLIST (a live window)' };
}

/** Checks one segment: CORS on a plain GET, then Range as Shoal sends it and as a browser's preflight asks. */
async function checkSegment(url: string, findings: PreflightFinding[]): Promise<void> {
  const ranged = await request(url, { Origin: PREFLIGHT_ORIGIN, Range: 'bytes=0-1' }, 'GET', false);
  if ('error' in ranged || ranged.status < 200 || ranged.status > 299) {
    const problem = 'error' in ranged ? ranged.error : `HTTP ${ranged.status}`;
    findings.push({ level: 'error', url, problem: `a segment the playlist lists could not be fetched: ${problem}`, fix: 'check that the segments are served beside the playlist' });
    return;
  }
  const cors = corsFinding(url, 'segment', ranged.headers);
  if (cors) findings.push(cors);
  if (ranged.status !== 206) {
    findings.push({
      level: 'warning',
      url,
      problem: `a Range request (bytes=0-1) got HTTP ${ranged.status} with the whole segment: when a peer leaves mid-segment, Shoal fetches the whole segment again instead of the rest`,
      fix: 'serve byte ranges (HTTP 206 with Content-Range; `Accept-Ranges: bytes`)',
    });
  } else if (!exposes(ranged.headers, 'content-range')) {
    findings.push({
      level: 'warning',
      url,
      problem: 'Access-Control-Expose-Headers does not name Content-Range: a page cannot read which bytes a 206 answer holds (Shoal does not need to; some players do)',
      fix: 'add `Access-Control-Expose-Headers: Content-Length, Content-Range`',
    });
  }
  // Browsers send this preflight before a Range request unless they count the range as a simple
  // header (a single `bytes=a-b` in current Chromium); without an allowing answer the request fails.
  const preflight = await request(url, { Origin: PREFLIGHT_ORIGIN, 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'range' }, 'OPTIONS', false);
  const allowsRange = !('error' in preflight) && preflight.status >= 200 && preflight.status <= 299 && allowsHeader(preflight.headers, 'range') && preflight.headers.get('access-control-allow-origin') !== null;
  if (!allowsRange) {
    const answer = 'error' in preflight ? preflight.error : `HTTP ${preflight.status}${allowsHeader(preflight.headers, 'range') ? '' : ', no Access-Control-Allow-Headers naming Range'}`;
    findings.push({
      level: 'warning',
      url,
      problem: `a CORS preflight for a Range request (OPTIONS, Access-Control-Request-Headers: range) is not allowed (${answer}): browsers that preflight Range requests cannot resume a segment over HTTP`,
      fix: 'answer OPTIONS with 204, `Access-Control-Allow-Origin: *`, `Access-Control-Allow-Headers: Range` and `Access-Control-Allow-Methods: GET, HEAD, OPTIONS`',
    });
  }
}

const headerList = (headers: Headers, name: string) => (headers.get(name) ?? '').split(',').map((item) => item.trim().toLowerCase());
const exposes = (headers: Headers, name: string) => headerList(headers, 'access-control-expose-headers').some((item) => item === name || item === '*');
const allowsHeader = (headers: Headers, name: string) => headerList(headers, 'access-control-allow-headers').some((item) => item === name || item === '*');

/** Runs every check on a stream (its master playlist URL); never throws. */
export async function preflightStream(masterUrl: string): Promise<StreamPreflight> {
  const findings: PreflightFinding[] = [];
  const result: StreamPreflight = { masterUrl, mediaPlaylistUrl: null, segmentUrl: null, kind: null, kindReason: 'no media playlist was read', findings, playable: false };
  const master = await fetchPlaylist(masterUrl, 'master playlist', findings);
  if (master !== null) {
    const variant = firstVariantUri(master);
    result.mediaPlaylistUrl = variant === null ? masterUrl : new URL(variant, masterUrl).href;
    const media = variant === null ? master : await fetchPlaylist(result.mediaPlaylistUrl, 'media playlist', findings);
    if (media !== null) {
      ({ kind: result.kind, reason: result.kindReason } = streamKindOf(media));
      let segments: ReturnType<typeof parseMediaPlaylist>['segments'] = [];
      try {
        segments = parseMediaPlaylist(media).segments;
      } catch (error) {
        findings.push({ level: 'error', url: result.mediaPlaylistUrl, problem: `the media playlist cannot be read: ${(error as Error).message}`, fix: 'serve a valid HLS media playlist' });
      }
      // Live: the newest segment, the one least likely to have left the window meanwhile.
      const segment = result.kind === 'live' ? segments.at(-1) : segments[0];
      if (segment) {
        result.segmentUrl = new URL(segment.uri, result.mediaPlaylistUrl).href;
        await checkSegment(result.segmentUrl, findings);
      }
    }
  }
  result.playable = !findings.some((finding) => finding.level === 'error');
  return result;
}

/** The findings as lines for a person: errors first, those with one fix together, then the fix. */
export function describePreflight(preflight: StreamPreflight): string[] {
  const groups = new Map<string, PreflightFinding[]>();
  for (const level of ['error', 'warning'] as const) {
    for (const finding of preflight.findings.filter((candidate) => candidate.level === level)) {
      const key = `${level}\0${finding.fix}`;
      groups.set(key, [...(groups.get(key) ?? []), finding]);
    }
  }
  return [...groups.values()].flatMap((findings) => [
    ...findings.map((finding, index) => `  ${index > 0 ? '       ' : finding.level === 'error' ? 'ERROR: ' : 'warning: '}${finding.url}: ${finding.problem}`),
    `         fix: ${findings[0]!.fix}`,
  ]);
}

export type StreamCheckCode = 'STREAM_UNPLAYABLE' | 'STREAM_KIND_MISMATCH';

/** The stream cannot be played as asked; nothing was launched. */
export class StreamCheckError extends Error {
  override readonly name = 'StreamCheckError';
  constructor(
    readonly code: StreamCheckCode,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The scenario to run on a stream of this kind: the requested one if it is of that kind (a
 * mismatch is refused, naming the scenarios that fit), else live-normal or vod by the kind.
 */
export function scenarioForStream(kind: StreamKind, kindReason: string, requested: Scenario | undefined, url: string): { scenario: Scenario; note: string | null } {
  const kindName = kind === 'vod' ? 'VOD' : 'live';
  if (requested) {
    if (requested.stream === kind) return { scenario: requested, note: null };
    const fitting = Object.values(scenarios).filter((scenario) => scenario.stream === kind).map((scenario) => scenario.name);
    throw new StreamCheckError(
      'STREAM_KIND_MISMATCH',
      `--scenario ${requested.name} is for a ${requested.stream === 'vod' ? 'VOD' : 'live'} stream, but ${url} is ${kindName} (${kindReason}): use --scenario ${fitting.join(' or ')}, or leave --scenario out to choose by the stream`,
    );
  }
  const scenario = scenarios[kind === 'vod' ? 'vod' : 'live-normal']!;
  return { scenario, note: `the stream is ${kindName} (${kindReason}): scenario ${scenario.name}` };
}

/**
 * The runner's hook for --stream: the preflight, its warnings logged, its errors thrown as one
 * StreamCheckError (STREAM_UNPLAYABLE) naming each; then the scenario that fits the stream.
 */
export async function checkExternalStream(url: string, requested: Scenario | undefined, log: (line: string) => void): Promise<Scenario> {
  log(`checking ${url} as a viewer page on another origin will load it (CORS, Range, VOD or live)`);
  const preflight = await preflightStream(url);
  const lines = describePreflight(preflight);
  if (!preflight.playable) {
    throw new StreamCheckError('STREAM_UNPLAYABLE', [`the stream failed its preflight; no browser was started:`, ...lines].join('\n'));
  }
  for (const line of lines) log(line);
  const { scenario, note } = scenarioForStream(preflight.kind!, preflight.kindReason, requested, url);
  if (note) log(note);
  return scenario;
}
