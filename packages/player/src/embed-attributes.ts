// The script-tag embed's and the iframe page's settings: data-attributes on a
// `<div data-shoal-src>` and query parameters of embed.html, read into ShoalPlayerOptions.
import { PlayerError } from './errors.js';
import type { ShoalPlayerOptions } from './options.js';

/** `data-shoal-*` attributes a div may carry (values as written in HTML). */
export const embedAttributes = {
  src: 'data-shoal-src',
  tracker: 'data-shoal-tracker',
  autoplay: 'data-shoal-autoplay',
  muted: 'data-shoal-muted',
  poster: 'data-shoal-poster',
  p2p: 'data-shoal-p2p',
  stats: 'data-shoal-stats',
  iceServers: 'data-shoal-ice-servers',
  start: 'data-shoal-start',
  stop: 'data-shoal-stop',
  loop: 'data-shoal-loop',
  controls: 'data-shoal-controls',
  title: 'data-shoal-title',
  subtitle: 'data-shoal-subtitle',
  integrity: 'data-shoal-integrity',
  requireVerified: 'data-shoal-require-verified',
} as const;

/** Present-and-empty, "1", "true", "on", "yes" mean true; "0", "false", "off", "no" mean false. */
export function parseFlag(value: string | null | undefined): boolean | undefined {
  if (value === null || value === undefined) return undefined;
  const word = value.trim().toLowerCase();
  if (word === '' || word === '1' || word === 'true' || word === 'on' || word === 'yes') return true;
  if (word === '0' || word === 'false' || word === 'off' || word === 'no') return false;
  return undefined;
}

/** Tracker URLs separated by spaces or commas. */
export function parseTrackers(values: ReadonlyArray<string | null>): string[] | undefined {
  const urls = values.flatMap((value) => (value ?? '').split(/[\s,]+/)).filter((url) => url !== '');
  return urls.length > 0 ? urls : undefined;
}

/**
 * A time as raw seconds (`90`, `12.5`), with units (`1h2m3s`, `1m30s`, `45s`, `2m`) or as a clock
 * (`1:30`, `1:02:03`); absent leaves the default. `where` names the attribute or parameter.
 */
export function parseTime(value: string | null, where: string): number | undefined {
  if (value === null) return undefined;
  const text = value.trim().toLowerCase();
  let seconds: number | undefined;
  if (/^\d+(\.\d+)?$/.test(text)) seconds = Number(text);
  const units = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+(?:\.\d+)?)s)?$/.exec(text);
  if (seconds === undefined && units && text !== '') seconds = Number(units[1] ?? 0) * 3600 + Number(units[2] ?? 0) * 60 + Number(units[3] ?? 0);
  const clock = /^(?:(\d+):)?(\d{1,2}):(\d{2}(?:\.\d+)?)$/.exec(text);
  if (seconds === undefined && clock) seconds = Number(clock[1] ?? 0) * 3600 + Number(clock[2]) * 60 + Number(clock[3]);
  if (seconds === undefined) {
    throw new PlayerError('INVALID_OPTION', `${where}: expected seconds (90), a duration (1m30s) or a clock time (1:30), got ${JSON.stringify(value)}`);
  }
  return seconds;
}

/** Text, or undefined when absent or empty. */
const textOf = (value: string | null) => (value === null || value.trim() === '' ? undefined : value.trim());

/**
 * ICE servers written as JSON (`[{"urls":"stun:stun.example.com:3478"}]`, `[]` for none); absent
 * leaves the default. `where` names the attribute or parameter in the error. The entries
 * themselves are checked with the other options.
 */
export function parseIceServers(value: string | null, where: string): RTCIceServer[] | undefined {
  if (value === null) return undefined;
  try {
    return JSON.parse(value) as RTCIceServer[];
  } catch (error) {
    throw new PlayerError('INVALID_OPTION', `${where}: expected a JSON array of ICE servers such as [{"urls":"stun:stun.example.com:3478"}], got ${JSON.stringify(value)} (${(error as Error).message})`);
  }
}

export function optionsFromAttributes(element: Pick<Element, 'getAttribute'>): ShoalPlayerOptions {
  const read = (name: string) => element.getAttribute(name);
  return {
    iceServers: parseIceServers(read(embedAttributes.iceServers), embedAttributes.iceServers),
    src: read(embedAttributes.src) ?? '',
    trackers: parseTrackers([read(embedAttributes.tracker)]),
    autoplay: parseFlag(read(embedAttributes.autoplay)),
    muted: parseFlag(read(embedAttributes.muted)),
    poster: read(embedAttributes.poster) ?? undefined,
    p2p: parseFlag(read(embedAttributes.p2p)),
    statsOpen: parseFlag(read(embedAttributes.stats)),
    start: parseTime(read(embedAttributes.start), embedAttributes.start),
    stop: parseTime(read(embedAttributes.stop), embedAttributes.stop),
    loop: parseFlag(read(embedAttributes.loop)),
    controls: parseFlag(read(embedAttributes.controls)),
    title: textOf(read(embedAttributes.title)),
    subtitle: textOf(read(embedAttributes.subtitle)),
    integrity: textOf(read(embedAttributes.integrity)),
    requireVerifiedP2P: parseFlag(read(embedAttributes.requireVerified)),
  };
}

/**
 * embed.html?src=…&tracker=…&iceServers=[…]&autoplay=1&muted=1&p2p=1&poster=…&stats=1
 * &start=1m30s&stop=2m&loop=1&controls=0&title=…&subtitle=en&integrity=<manifest url>&requireVerified=1
 */
export function optionsFromQuery(query: URLSearchParams): ShoalPlayerOptions {
  return {
    iceServers: parseIceServers(query.get('iceServers'), 'iceServers (embed.html parameter)'),
    src: query.get('src') ?? '',
    trackers: parseTrackers(query.getAll('tracker')),
    autoplay: parseFlag(query.get('autoplay')),
    muted: parseFlag(query.get('muted')),
    poster: query.get('poster') ?? undefined,
    p2p: parseFlag(query.get('p2p')),
    statsOpen: parseFlag(query.get('stats')),
    start: parseTime(query.get('start'), 'start (embed.html parameter)'),
    stop: parseTime(query.get('stop'), 'stop (embed.html parameter)'),
    loop: parseFlag(query.get('loop')),
    controls: parseFlag(query.get('controls')),
    title: textOf(query.get('title')),
    subtitle: textOf(query.get('subtitle')),
    integrity: textOf(query.get('integrity')),
    requireVerifiedP2P: parseFlag(query.get('requireVerified')),
  };
}

export interface EmbedSnippetSettings {
  src: string;
  trackers: string[];
  /** Where shoal-player.min.js and embed.html are served from. */
  scriptUrl: string;
  frameUrl: string;
  /** Omitted: the player's default (public STUN servers); [] turns STUN off. */
  iceServers?: RTCIceServer[];
  autoplay?: boolean;
  muted?: boolean;
  p2p?: boolean;
  /** The iframe's accessible name. Default: "Video player". */
  title?: string;
}

/** The two snippets a site owner pastes, for the snippet generator. */
export function embedSnippets(settings: EmbedSnippetSettings): { script: string; iframe: string } {
  const escape = (text: string) => text.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;');
  const attributes = [`data-shoal-src="${escape(settings.src)}"`];
  if (settings.trackers.length > 0) attributes.push(`data-shoal-tracker="${escape(settings.trackers.join(' '))}"`);
  if (settings.iceServers) attributes.push(`data-shoal-ice-servers="${escape(JSON.stringify(settings.iceServers))}"`);
  if (settings.autoplay) attributes.push('data-shoal-autoplay');
  if (settings.muted) attributes.push('data-shoal-muted');
  if (settings.p2p === false) attributes.push('data-shoal-p2p="off"');
  const query = new URLSearchParams({ src: settings.src });
  for (const tracker of settings.trackers) query.append('tracker', tracker);
  if (settings.iceServers) query.set('iceServers', JSON.stringify(settings.iceServers));
  if (settings.autoplay) query.set('autoplay', '1');
  if (settings.muted) query.set('muted', '1');
  query.set('p2p', settings.p2p === false ? '0' : '1');
  const title = escape(settings.title ?? 'Video player');
  return {
    script: `<script src="${escape(settings.scriptUrl)}" defer></script>\n<div ${attributes.join(' ')}></div>`,
    iframe:
      `<iframe src="${escape(`${settings.frameUrl}?${query}`)}" title="${title}" width="640" height="360" style="border:0" ` +
      `allow="autoplay; fullscreen; picture-in-picture" allowfullscreen></iframe>`,
  };
}
