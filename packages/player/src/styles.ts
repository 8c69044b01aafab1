// The script-tag bundles add their CSS to the page themselves (a page without a build step has
// no CSS import). ESM users import the CSS files instead (`@shoal/player/styles.css`).
const marker = 'data-shoal-player-styles';

export function injectStyles(css: string, doc: Document = document): void {
  if (doc.querySelector(`style[${marker}]`)) return;
  const style = doc.createElement('style');
  style.setAttribute(marker, '');
  style.textContent = css;
  // First in <head>, so the page's own rules override ours.
  doc.head.prepend(style);
}
