// Which swarm a rendition belongs to: the swarm id plus the rendition's own attributes from the
// master playlist, so viewers meet on the same rendition whatever order their playlists list it in.
import { streamKey, type RenditionAttributes } from '@shoal/core';

/** The parts of an hls.js Level that identify a rendition (hls.js 1.5 and 1.6). */
export interface LevelLike {
  attrs?: Record<string, unknown>;
  bitrate?: number;
  width?: number;
  height?: number;
  codecSet?: string;
  audioCodec?: string;
  videoCodec?: string;
  name?: string;
}

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

export function renditionOf(level: LevelLike): RenditionAttributes {
  const attrs = level.attrs ?? {};
  const bandwidth = Number(attrs.BANDWIDTH ?? level.bitrate);
  const codecs = text(attrs.CODECS) ?? ([level.videoCodec, level.audioCodec].filter(Boolean).join(',') || undefined);
  const rendition: RenditionAttributes = {};
  if (bandwidth > 0) rendition.bandwidth = bandwidth;
  const resolution = text(attrs.RESOLUTION) ?? (level.width && level.height ? `${level.width}x${level.height}` : undefined);
  if (resolution) rendition.resolution = resolution;
  if (codecs) rendition.codecs = codecs;
  const audioGroup = text(attrs.AUDIO);
  if (audioGroup) rendition.audioGroup = audioGroup;
  const name = text(attrs.NAME) ?? text(level.name);
  if (name) rendition.name = name;
  return rendition;
}

/** The stream key of every level, by level index. */
export function levelStreamKeys(swarmId: string, levels: readonly LevelLike[]): string[] {
  return levels.map((level) => streamKey(swarmId, renditionOf(level)));
}
