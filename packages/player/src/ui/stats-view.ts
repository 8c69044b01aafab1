// The P2P stats view: a compact control-bar item (download speed, share from peers, upload speed,
// peers) that toggles a panel with the full numbers. Redrawn once a second from getStats().
import { formatBytes, formatRendition, formatSeconds, formatShare, formatSpeed } from '../format.js';
import type { PlayerStats } from '../types.js';
import type { ComponentLike, Player } from '../video-js-api.js';

export interface StatsView {
  toggle(open?: boolean): void;
  readonly open: boolean;
  /** Redraws now (the view also redraws itself every second). */
  render(): void;
}

const panelRows: Array<{ key: string; label: string; value: (stats: PlayerStats) => string }> = [
  { key: 'playback', label: 'Playback', value: (s) => (s.playback === 'native' ? 'native HLS' : s.playback === 'hls.js' ? `hls.js${s.p2p === 'on' ? ' + Shoal P2P' : ''}` : 'unsupported') },
  { key: 'http-bytes', label: 'From origin (HTTP)', value: (s) => formatBytes(s.httpBytes) },
  { key: 'p2p-bytes', label: 'From peers (P2P)', value: (s) => formatBytes(s.p2pBytes) },
  { key: 'p2p-share', label: 'Share from peers', value: (s) => formatShare(s.p2pShare) },
  { key: 'uploaded-bytes', label: 'Uploaded to peers', value: (s) => formatBytes(s.uploadedBytes) },
  { key: 'download-speed', label: 'Download speed', value: (s) => formatSpeed(s.downloadBytesPerS) },
  { key: 'upload-speed', label: 'Upload speed', value: (s) => formatSpeed(s.uploadBytesPerS) },
  { key: 'peers', label: 'Peers', value: (s) => String(s.peers) },
  { key: 'rendition', label: 'Rendition', value: (s) => formatRendition(s.rendition) },
  { key: 'buffer', label: 'Buffer', value: (s) => formatSeconds(s.bufferS) },
  { key: 'live-latency', label: 'Live latency', value: (s) => formatSeconds(s.liveLatencyS) },
];

function element<K extends keyof HTMLElementTagNameMap>(tag: K, className: string, text = ''): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  node.className = className;
  if (text) node.textContent = text;
  return node;
}

export function installStatsView(player: Player, getStats: () => PlayerStats, options: { open: boolean }): StatsView {
  const controlBar = (player as unknown as ComponentLike).getChild('ControlBar');
  const fullscreenToggle = controlBar?.getChild('FullscreenToggle');
  const barChildren = controlBar?.children() ?? [];
  // Just before the quality menu / fullscreen toggle, where the right-hand controls start.
  const insertAt = fullscreenToggle ? barChildren.indexOf(fullscreenToggle) : barChildren.length;
  const button = controlBar?.addChild('Button', { className: 'shoal-stats-button', controlText: 'P2P statistics' }, Math.max(0, insertAt - 1));
  const summary = element('span', 'shoal-stats-summary');
  summary.setAttribute('aria-hidden', 'true');
  const down = element('span', 'shoal-stat shoal-stat-down');
  const share = element('span', 'shoal-stat shoal-stat-share');
  const up = element('span', 'shoal-stat shoal-stat-up');
  const peers = element('span', 'shoal-stat shoal-stat-peers');
  summary.append(down, share, up, peers);
  button?.el().append(summary);

  const panel = element('div', 'shoal-stats-panel');
  panel.setAttribute('role', 'dialog');
  panel.setAttribute('aria-label', 'P2P statistics');
  const header = element('div', 'shoal-stats-header');
  const title = element('span', 'shoal-stats-title', 'P2P statistics');
  const close = element('button', 'shoal-stats-close', '×');
  close.type = 'button';
  close.setAttribute('aria-label', 'Close statistics');
  header.append(title, close);
  const note = element('p', 'shoal-stats-note');
  const table = element('dl', 'shoal-stats-rows');
  const values = new Map<string, HTMLElement>();
  for (const row of panelRows) {
    const wrapper = element('div', 'shoal-stats-row');
    wrapper.dataset.stat = row.key;
    const value = element('dd', 'shoal-stats-value', '–');
    wrapper.append(element('dt', 'shoal-stats-label', row.label), value);
    table.append(wrapper);
    values.set(row.key, value);
  }
  panel.append(header, note, table);
  player.el().append(panel);

  let open = false;
  const render = () => {
    let stats: PlayerStats;
    try {
      stats = getStats();
    } catch {
      return;
    }
    const p2pOn = stats.p2p === 'on';
    down.textContent = `↓ ${formatSpeed(stats.downloadBytesPerS)}`;
    share.textContent = p2pOn ? `${formatShare(stats.p2pShare)} P2P` : 'P2P off';
    up.textContent = `↑ ${formatSpeed(stats.uploadBytesPerS)}`;
    peers.textContent = `${stats.peers} ${stats.peers === 1 ? 'peer' : 'peers'}`;
    up.hidden = !p2pOn;
    peers.hidden = !p2pOn;
    button?.controlText(`P2P statistics: ${share.textContent}, ${stats.peers} peers`);
    if (!open) return;
    note.textContent = stats.p2pNote;
    note.hidden = stats.p2pNote === '';
    for (const row of panelRows) values.get(row.key)!.textContent = row.value(stats);
  };
  const toggle = (next = !open) => {
    open = next;
    panel.classList.toggle('shoal-stats-open', open);
    button?.toggleClass('shoal-stats-active', open);
    render();
  };
  button?.on('click', () => toggle());
  close.addEventListener('click', () => toggle(false));
  const timer = setInterval(render, 1_000);
  player.on('dispose', () => clearInterval(timer));
  toggle(options.open);
  return {
    toggle,
    get open() {
      return open;
    },
    render,
  };
}
