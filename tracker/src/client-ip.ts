// Which address a connection comes from. Behind proxies, each proxy appends the address it saw
// to X-Forwarded-For, so only the rightmost `trustedHops` entries were written by proxies we
// run; anything left of them was sent by the client and may be forged.

/**
 * The client address: the X-Forwarded-For entry `trustedHops` from the right (the address our
 * outermost proxy saw), or the socket's address when no hops are trusted or the header is absent.
 * A header with fewer entries than hops came through fewer proxies than configured: its leftmost
 * entry is still one a proxy of ours wrote.
 */
export function clientIp(socketAddress: string, forwardedFor: string, trustedHops: number): string {
  const direct = socketAddress.replace(/^::ffff:/, '');
  if (trustedHops <= 0 || forwardedFor === '') return direct;
  const entries = forwardedFor.split(',');
  const entry = entries[Math.max(0, entries.length - trustedHops)]!.trim();
  return entry === '' ? direct : entry.replace(/^::ffff:/, '');
}
