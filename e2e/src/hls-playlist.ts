// Just enough HLS playlist handling for the origin: read the VOD media playlists that ffmpeg
// wrote, and render a sliding live window over the same segments.

export interface PlaylistSegment {
  uri: string;
  durationS: number;
}

export interface MediaPlaylist {
  targetDurationS: number;
  segments: PlaylistSegment[];
}

export function parseMediaPlaylist(text: string): MediaPlaylist {
  const lines = text.split(/\r?\n/).map((line) => line.trim());
  if (lines[0] !== '#EXTM3U') throw new Error('not an HLS playlist: the first line is not #EXTM3U');
  let targetDurationS = 0;
  let pendingDurationS: number | undefined;
  const segments: PlaylistSegment[] = [];
  for (const line of lines) {
    if (line.startsWith('#EXT-X-TARGETDURATION:')) targetDurationS = Number(line.slice(22));
    else if (line.startsWith('#EXTINF:')) pendingDurationS = Number.parseFloat(line.slice(8));
    else if (line && !line.startsWith('#')) {
      if (pendingDurationS === undefined) throw new Error(`segment ${line} has no #EXTINF`);
      segments.push({ uri: line, durationS: pendingDurationS });
      pendingDurationS = undefined;
    }
  }
  if (segments.length === 0) throw new Error('media playlist has no segments');
  return { targetDurationS, segments };
}

export interface LiveWindowOptions {
  /** The looped media: live segment n plays file n mod length. */
  segments: readonly PlaylistSegment[];
  targetDurationS: number;
  windowSize: number;
  /** Live sequence number of the newest available segment. */
  newestSequence: number;
  /** Wall-clock start (ms since epoch) of live segment 0, for EXT-X-PROGRAM-DATE-TIME. */
  epochMs: number;
  /** URI of live segment n. */
  segmentUri(sequence: number): string;
}

/**
 * A live media playlist: the last `windowSize` segments up to `newestSequence`. The media loops,
 * and every loop's first segment carries #EXT-X-DISCONTINUITY (timestamps restart there);
 * EXT-X-DISCONTINUITY-SEQUENCE counts the loops that slid out of the window, so a segment's
 * discontinuity number never changes between refreshes.
 */
export function renderLivePlaylist(options: LiveWindowOptions): string {
  const { segments, windowSize, newestSequence } = options;
  const loopLength = segments.length;
  const firstSequence = Math.max(0, newestSequence - windowSize + 1);
  const loopDurationS = segments.reduce((sum, segment) => sum + segment.durationS, 0);
  const startOfSequenceS = (sequence: number): number => {
    const loops = Math.floor(sequence / loopLength);
    let offsetS = loops * loopDurationS;
    for (let index = 0; index < sequence % loopLength; index += 1) offsetS += segments[index]!.durationS;
    return offsetS;
  };
  const lines = [
    '#EXTM3U',
    '#EXT-X-VERSION:3',
    `#EXT-X-TARGETDURATION:${options.targetDurationS}`,
    `#EXT-X-MEDIA-SEQUENCE:${firstSequence}`,
    `#EXT-X-DISCONTINUITY-SEQUENCE:${Math.floor(firstSequence / loopLength)}`,
  ];
  for (let sequence = firstSequence; sequence <= newestSequence; sequence += 1) {
    const segment = segments[sequence % loopLength]!;
    if (sequence % loopLength === 0 && sequence > firstSequence) lines.push('#EXT-X-DISCONTINUITY');
    const startMs = options.epochMs + startOfSequenceS(sequence) * 1000;
    lines.push(`#EXT-X-PROGRAM-DATE-TIME:${new Date(startMs).toISOString()}`);
    lines.push(`#EXTINF:${segment.durationS.toFixed(6)},`);
    lines.push(options.segmentUri(sequence));
  }
  return `${lines.join('\n')}\n`;
}
