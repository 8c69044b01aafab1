// The player's CSS (video.js's skin with its icon font, plus Shoal's) added to the page once.
import videojsCss from 'video.js/dist/video-js.min.css';
import shoalCss from './styles.css';

const marker = 'data-shoal-player-styles';

export function injectStyles(doc: Document = document): void {
  if (doc.querySelector(`style[${marker}]`)) return;
  const style = doc.createElement('style');
  style.setAttribute(marker, '');
  style.textContent = `${videojsCss}\n${shoalCss}`;
  // First in <head>, so the page's own rules override ours.
  doc.head.prepend(style);
}
