// What the test origin serves, path by path: the sample stream's files as VOD, the same files
// looped as a live stream whose edge moves with the clock, the subtitles of both, and SHA-256
// manifests of their segments. No HTTP here: origin.ts answers requests with what resolve() finds.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseMediaPlaylist, renderLivePlaylist, type MediaPlaylist } from './hls-playlist.js';
import { sampleMediaSpec } from './sample-media.js';

export const contentTypes: Record<string, string> = {
  m3u8: 'application/vnd.apple.mpegurl',
  ts: 'video/mp2t',
  vtt: 'text/vtt; charset=utf-8',
  json: 'application/json',
};

/** A file the origin can send, with how it is counted and cached. */
export interface OriginResource {
  body: Buffer;
  kind: 'segment' | 'playlist' | 'subtitle';
  type: string;
  cacheControl: string;
}

interface SubtitleTrack {
  /** What its live files are named after. */
  language: string;
  playlist: MediaPlaylist;
}

/** Live segment n of a rendition: unique across renditions, like the VOD files. */
export const liveSegmentName = (rendition: string, sequence: number) => `${rendition}-${sequence}.ts`;
/** Live subtitle file n of a language (`en-1234.vtt`): the looped VOD file's cues. */
export const liveSubtitleName = (language: string, sequence: number) => `${language}-${sequence}.vtt`;

const sha256 = (body: Buffer) => createHash('sha256').update(body).digest('hex');

export class OriginContent {
  readonly liveEpochMs: number;
  private readonly master: Buffer;
  private readonly renditions = new Map<string, MediaPlaylist>();
  /** Subtitle renditions by directory name. */
  private readonly subtitleTracks = new Map<string, SubtitleTrack>();
  private readonly segmentMs: number;
  private readonly files = new Map<string, Buffer>();
  /** PeerTube's format ({file name: hex digest}): every VOD file. */
  private readonly vodHashes: Record<string, string> = {};

  /** `liveEpochMs`: wall-clock start of live segment 0; by default a full window before now. */
  constructor(
    private readonly mediaDir: string,
    private readonly windowSize: number,
    private readonly now: () => number,
    liveEpochMs: number | undefined,
  ) {
    this.master = readFileSync(join(mediaDir, 'master.m3u8'));
    for (const { name } of sampleMediaSpec.renditions) {
      this.renditions.set(name, parseMediaPlaylist(readFileSync(join(mediaDir, name, 'index.m3u8'), 'utf8')));
    }
    for (const { name, language } of sampleMediaSpec.subtitles) {
      this.subtitleTracks.set(name, { language, playlist: parseMediaPlaylist(readFileSync(join(mediaDir, name, 'index.m3u8'), 'utf8')) });
    }
    const anyRendition = this.renditions.values().next().value as MediaPlaylist;
    this.segmentMs = (anyRendition.segments.reduce((sum, s) => sum + s.durationS, 0) / anyRendition.segments.length) * 1000;
    this.liveEpochMs = liveEpochMs ?? now() - windowSize * this.segmentMs;
    for (const [name, playlist] of this.renditions) {
      for (const segment of playlist.segments) this.vodHashes[segment.uri] = sha256(this.readMedia(`${name}/${segment.uri}`)!);
    }
  }

  /** Live sequence number of the newest available segment, now. */
  liveEdgeSequence(): number {
    return Math.max(-1, Math.floor((this.now() - this.liveEpochMs) / this.segmentMs) - 1);
  }

  /** What a GET of `path` answers, or undefined for a 404. */
  resolve(path: string): OriginResource | undefined {
    const parts = path.split('/').filter(Boolean);
    const [mode, rendition, file] = parts;
    if (mode !== 'vod' && mode !== 'live') return undefined;
    if (parts.length === 2 && rendition === 'master.m3u8') {
      return { body: this.master, kind: 'playlist', type: contentTypes.m3u8!, cacheControl: 'public, max-age=60' };
    }
    if (parts.length === 2 && rendition === 'segments-sha256.json') {
      const body = Buffer.from(JSON.stringify(mode === 'vod' ? this.vodHashes : this.liveHashes()));
      return { body, kind: 'playlist', type: contentTypes.json!, cacheControl: mode === 'vod' ? 'public, max-age=60' : 'public, max-age=1' };
    }
    if (parts.length !== 3 || !rendition || !file) return undefined;
    const subtitleTrack = this.subtitleTracks.get(rendition);
    if (subtitleTrack) return this.resolveSubtitles(mode, subtitleTrack, rendition, file);
    if (!this.renditions.has(rendition)) return undefined;
    return mode === 'vod' ? this.resolveVod(rendition, file) : this.resolveLive(rendition, file);
  }

  private readMedia(relativePath: string): Buffer | undefined {
    let body = this.files.get(relativePath);
    if (!body) {
      try {
        body = readFileSync(join(this.mediaDir, relativePath));
      } catch {
        return undefined;
      }
      this.files.set(relativePath, body);
    }
    return body;
  }

  /** Live: the current window and the one before it. */
  private liveHashes(): Record<string, string> {
    const hashes: Record<string, string> = {};
    const newest = this.liveEdgeSequence();
    for (const [name, playlist] of this.renditions) {
      for (let sequence = Math.max(0, newest - 2 * this.windowSize + 1); sequence <= newest; sequence += 1) {
        hashes[liveSegmentName(name, sequence)] = this.vodHashes[playlist.segments[sequence % playlist.segments.length]!.uri]!;
      }
    }
    return hashes;
  }

  private resolveVod(rendition: string, file: string): OriginResource | undefined {
    const body = /^(index\.m3u8|[\w-]+\.ts)$/.test(file) ? this.readMedia(`${rendition}/${file}`) : undefined;
    if (!body) return undefined;
    const isPlaylist = file.endsWith('.m3u8');
    return {
      body,
      kind: isPlaylist ? 'playlist' : 'segment',
      type: isPlaylist ? contentTypes.m3u8! : contentTypes.ts!,
      cacheControl: isPlaylist ? 'public, max-age=60' : 'public, max-age=31536000, immutable',
    };
  }

  private resolveLive(rendition: string, file: string): OriginResource | undefined {
    const playlist = this.renditions.get(rendition)!;
    if (file === 'index.m3u8') return this.livePlaylist(playlist, (sequence) => liveSegmentName(rendition, sequence));
    const match = /^[\w]+-(\d+)\.ts$/.exec(file);
    if (!match || file !== liveSegmentName(rendition, Number(match[1]))) return undefined;
    const sequence = Number(match[1]);
    if (sequence > this.liveEdgeSequence()) return undefined; // not produced yet
    const loopIndex = sequence % playlist.segments.length;
    const body = this.readMedia(`${rendition}/${playlist.segments[loopIndex]!.uri}`);
    return body && { body, kind: 'segment', type: contentTypes.ts!, cacheControl: 'public, max-age=3600' };
  }

  private livePlaylist(playlist: MediaPlaylist, segmentUri: (sequence: number) => string): OriginResource | undefined {
    const newest = this.liveEdgeSequence();
    if (newest < 0) return undefined;
    const text = renderLivePlaylist({
      segments: playlist.segments,
      targetDurationS: playlist.targetDurationS,
      windowSize: this.windowSize,
      newestSequence: newest,
      epochMs: this.liveEpochMs,
      segmentUri,
    });
    // A live playlist may be cached for at most half a target duration, like a real origin.
    const maxAge = Math.max(1, Math.floor(playlist.targetDurationS / 2));
    return { body: Buffer.from(text), kind: 'playlist', type: contentTypes.m3u8!, cacheControl: `public, max-age=${maxAge}` };
  }

  /** A subtitle rendition's playlist or .vtt file, VOD or live (the live window over the looped files). */
  private resolveSubtitles(mode: 'vod' | 'live', track: SubtitleTrack, directory: string, file: string): OriginResource | undefined {
    if (mode === 'live' && file === 'index.m3u8') return this.livePlaylist(track.playlist, (sequence) => liveSubtitleName(track.language, sequence));
    let relativePath: string | undefined;
    if (mode === 'vod') {
      relativePath = file === 'index.m3u8' || /^[\w-]+\.vtt$/.test(file) ? `${directory}/${file}` : undefined;
    } else {
      const match = /^[\w-]+-(\d+)\.vtt$/.exec(file);
      const sequence = Number(match?.[1]);
      if (match && file === liveSubtitleName(track.language, sequence) && sequence <= this.liveEdgeSequence()) {
        relativePath = `${directory}/${track.playlist.segments[sequence % track.playlist.segments.length]!.uri}`;
      }
    }
    const body = relativePath === undefined ? undefined : this.readMedia(relativePath);
    if (!body) return undefined;
    if (file.endsWith('.m3u8')) return { body, kind: 'playlist', type: contentTypes.m3u8!, cacheControl: 'public, max-age=60' };
    return { body, kind: 'subtitle', type: contentTypes.vtt!, cacheControl: mode === 'vod' ? 'public, max-age=31536000, immutable' : 'public, max-age=3600' };
  }
}
