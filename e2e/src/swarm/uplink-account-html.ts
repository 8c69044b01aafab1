// The uplink account (uplink-account.ts) as a part of report.html: one bar of the uploaders'
// capacity after the joins (sent, then the unused rest by cause), and the origin copies by kind.
import { UNUSED_WORDS, type UplinkAccount, type UplinkState } from './uplink-account.js';

const COLORS: Record<UplinkState | 'sent', string> = { sent: '#2a7', idle: '#bbb', yielding: '#e9a23b', relay: '#8ab4f8', paced: '#c77', full: '#555' };
const pct = (value: number) => `${(value * 100).toFixed(1)}%`;

export function uplinkAccountHtml(account: UplinkAccount): string {
  const parts: string[] = [];
  if (account.utilisation !== null && account.unusedByCause) {
    const shares: [UplinkState | 'sent', number, string][] = [
      ['sent', account.utilisation, 'sent'],
      ...(Object.entries(account.unusedByCause) as [UplinkState, number][]).map(([state, share]): [UplinkState, number, string] => [state, share * (1 - account.utilisation!), UNUSED_WORDS[state]]),
    ];
    let x = 0;
    const bars = shares
      .filter(([, share]) => share > 0)
      .map(([key, share, words]) => {
        const rect = `<rect x="${(x * 100).toFixed(2)}%" y="0" width="${(share * 100).toFixed(2)}%" height="18" fill="${COLORS[key]}"><title>${words}: ${pct(share)}</title></rect>`;
        x += share;
        return rect;
      })
      .join('');
    const legend = shares.map(([key, share, words]) => `<span style="color:${COLORS[key]}">■</span> ${words} ${pct(share)}`).join(' &nbsp; ');
    parts.push(`<svg viewBox="0 0 100 18" preserveAspectRatio="none" style="height:18px">${bars}</svg><p style="font-size:13px">${legend}</p>`);
  } else parts.push(`<p>${(account.sentBytes / 1e6).toFixed(1)} MB uploaded (unlimited links: no utilisation).</p>`);
  const copies = account.originCopiesPerSegment;
  parts.push(
    `<p>Origin copies per segment ${copies.total.toFixed(2)}: seed at publication ${copies.seed.toFixed(2)}, urgent ${copies.urgent.toFixed(2)}, Range ${copies.range.toFixed(2)}, again after P2P bytes were thrown away ${copies.refetch.toFixed(2)}. ` +
      `Uploads cancelled by their requesters: ${account.cancelledUploads} (${(account.cancelledBytes / 1e6).toFixed(1)} MB of them sent).` +
      (account.hopDepth && account.hopDepth.copies > 0
        ? ` P2P copies by peer hops from an origin copy: ${account.hopDepth.byDepth.map((count, depth) => (count ? `${depth}: ${pct(count / account.hopDepth!.copies)}` : '')).filter(Boolean).join(', ')} (mean ${account.hopDepth.mean!.toFixed(2)}).`
        : '') +
      '</p>',
  );
  return `<h4>Uplinks after the joins (${Math.round(account.fromS)} s on, ${account.uploaders} uploading viewers)</h4>${parts.join('')}`;
}
