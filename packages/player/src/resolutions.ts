// The renditions a viewer can choose from, as the quality menu, the iframe API and ShoalPlayer
// list them: "Auto" (id -1) first, then one entry per hls.js level, highest first.

export interface Resolution {
  /** hls.js level index; -1 for "Auto" (hls.js's ABR picks). */
  id: number;
  /** "Auto", "720p", or "720p · 2500 kbit/s" where two levels share a height. */
  label: string;
  /** 0 for "Auto". */
  width: number;
  height: number;
  bitrate: number;
  /** What plays now: the chosen level, or "Auto" while ABR picks. */
  active: boolean;
}

export interface LevelLike {
  width: number;
  height: number;
  bitrate: number;
}

/** `chosenLevel`: the level a viewer picked, or -1 while ABR picks. */
export function resolutionList(levels: readonly LevelLike[], chosenLevel: number): Resolution[] {
  const entries = levels.map((level, index) => ({
    id: index,
    label: level.height > 0 ? `${level.height}p` : `${Math.round(level.bitrate / 1000)} kbit/s`,
    width: level.width,
    height: level.height,
    bitrate: level.bitrate,
    active: index === chosenLevel,
  }));
  // Two levels with the same height are told apart by bitrate.
  const shared = new Set(entries.filter((entry) => entries.some((other) => other !== entry && other.label === entry.label)));
  for (const entry of shared) entry.label += ` · ${Math.round(entry.bitrate / 1000)} kbit/s`;
  entries.sort((a, b) => b.height - a.height || b.bitrate - a.bitrate);
  return [{ id: -1, label: 'Auto', width: 0, height: 0, bitrate: 0, active: chosenLevel < 0 }, ...entries];
}
