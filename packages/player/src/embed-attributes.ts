// The script-tag embed's and the iframe page's settings: data-attributes on a
// `<div data-shoal-src>` and query parameters of embed.html, read into ShoalPlayerOptions.
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

export function optionsFromAttributes(element: Pick<Element, 'getAttribute'>): ShoalPlayerOptions {
  const read = (name: string) => element.getAttribute(name);
  return {
    src: read(embedAttributes.src) ?? '',
    trackers: parseTrackers([read(embedAttributes.tracker)]),
    autoplay: parseFlag(read(embedAttributes.autoplay)),
    muted: parseFlag(read(embedAttributes.muted)),
    poster: read(embedAttributes.poster) ?? undefined,
    p2p: parseFlag(read(embedAttributes.p2p)),
    statsOpen: parseFlag(read(embedAttributes.stats)),
  };
}

/** embed.html?src=…&tracker=…&autoplay=1&muted=1&p2p=1&poster=…&stats=1 */
export function optionsFromQuery(query: URLSearchParams): ShoalPlayerOptions {
  return {
    src: query.get('src') ?? '',
    trackers: parseTrackers(query.getAll('tracker')),
    autoplay: parseFlag(query.get('autoplay')),
    muted: parseFlag(query.get('muted')),
    poster: query.get('poster') ?? undefined,
    p2p: parseFlag(query.get('p2p')),
    statsOpen: parseFlag(query.get('stats')),
  };
}

/** The two snippets a site owner pastes, for the snippet generator. */
export function embedSnippets(settings: {
  src: string;
  trackers: string[];
  scriptUrl: string;
  frameUrl: string;
  autoplay?: boolean;
  muted?: boolean;
  p2p?: boolean;
}): { script: string; iframe: string } {
  const escape = (text: string) => text.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;');
  const attributes = [`data-shoal-src="${escape(settings.src)}"`];
  if (settings.trackers.length > 0) attributes.push(`data-shoal-tracker="${escape(settings.trackers.join(' '))}"`);
  if (settings.autoplay) attributes.push('data-shoal-autoplay');
  if (settings.muted) attributes.push('data-shoal-muted');
  if (settings.p2p === false) attributes.push('data-shoal-p2p="off"');
  const query = new URLSearchParams({ src: settings.src });
  for (const tracker of settings.trackers) query.append('tracker', tracker);
  if (settings.autoplay) query.set('autoplay', '1');
  if (settings.muted) query.set('muted', '1');
  query.set('p2p', settings.p2p === false ? '0' : '1');
  return {
    script: `<script src="${escape(settings.scriptUrl)}" defer></script>\n<div ${attributes.join(' ')}></div>`,
    iframe: `<iframe src="${escape(`${settings.frameUrl}?${query}`)}" width="640" height="360" style="border:0" allow="autoplay; fullscreen" allowfullscreen></iframe>`,
  };
}
