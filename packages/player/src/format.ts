// How numbers read in the stats view: decimal units, as network tools show them.

export function formatBytes(bytes: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let value = Math.max(0, bytes);
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${value.toFixed(unit === 0 || value >= 100 ? 0 : 1)} ${units[unit]}`;
}

/** A speed in bits per second, from bytes per second. */
export function formatSpeed(bytesPerS: number): string {
  const bits = Math.max(0, bytesPerS) * 8;
  if (bits < 1_000) return `${Math.round(bits)} bit/s`;
  if (bits < 1_000_000) return `${(bits / 1_000).toFixed(bits < 100_000 ? 1 : 0)} kbit/s`;
  return `${(bits / 1_000_000).toFixed(1)} Mbit/s`;
}

export function formatShare(share: number | null): string {
  return share === null ? '–' : `${Math.round(share * 100)}%`;
}

export function formatSeconds(seconds: number | null): string {
  return seconds === null || !Number.isFinite(seconds) ? '–' : `${seconds.toFixed(1)} s`;
}

export function formatRendition(rendition: { index: number; width: number; height: number; bitrate: number; auto: boolean } | null): string {
  if (!rendition) return '–';
  if (rendition.index < 0) return 'chosen by the browser';
  const size = rendition.height > 0 ? `${rendition.height}p` : `level ${rendition.index}`;
  return `${size} · ${formatSpeed(rendition.bitrate / 8)}${rendition.auto ? ' (auto)' : ''}`;
}
