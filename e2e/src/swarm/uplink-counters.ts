// The kernel's count of what a viewer's uplink carried, by class: iptables counters in the OUTPUT
// chain of the viewer's own namespace (before its router's NAT, where it has one, so that the
// destinations are still the hub's), one rule per class, each returning, so a packet counts once:
// TCP to the origin, TCP to the tracker, unicast UDP (WebRTC: SCTP over DTLS over UDP, ICE, STUN
// and TURN), and the rest (the pages server, multicast such as mDNS, anything unforeseen).
// Loopback is left out. Bytes are IP packet bytes (headers included, no Ethernet header), counted
// as the viewer's stack emits them: before the uplink's tbf, so a packet it dropped still counts.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);
const CHAIN = 'SHOAL_UPLINK';

export type KernelClass = 'origin' | 'tracker' | 'udp' | 'other';
/** In the order of the chain's rules. */
export const KERNEL_CLASSES: readonly KernelClass[] = ['origin', 'tracker', 'udp', 'other'];

export interface PacketCount {
  bytes: number;
  packets: number;
}
export type KernelUplink = Record<KernelClass, PacketCount>;

/** Where the origin and the tracker listen: TCP to these ports (at this address, if given) is theirs. */
export interface UplinkDestinations {
  origin: { address: string | null; port: number };
  tracker: { address: string | null; port: number } | null;
}

/** The address and port of a URL's server, the address only when the URL names an IPv4 literal. */
export function destinationOf(url: string): { address: string | null; port: number } {
  const parsed = new URL(url);
  const secure = parsed.protocol === 'https:' || parsed.protocol === 'wss:';
  const port = parsed.port ? Number(parsed.port) : secure ? 443 : 80;
  return { address: /^\d+\.\d+\.\d+\.\d+$/.test(parsed.hostname) ? parsed.hostname : null, port };
}

const tcpTo = (to: { address: string | null; port: number }) => ['-p', 'tcp', ...(to.address ? ['-d', to.address] : []), '--dport', String(to.port)];

/** Installs the counting chain in namespace `name` (counters from zero). */
export async function installUplinkCounters(name: string, destinations: UplinkDestinations): Promise<void> {
  const iptables = (...args: string[]) => run('ip', ['netns', 'exec', name, 'iptables', '-w', ...args]);
  await iptables('-N', CHAIN);
  // No tracker of ours: its rule matches nothing (port 0), and the chain keeps its four rules.
  const tracker = destinations.tracker ?? { address: '0.0.0.0', port: 0 };
  for (const rule of [tcpTo(destinations.origin), tcpTo(tracker), ['-p', 'udp', '!', '-d', '224.0.0.0/4'], []]) {
    await iptables('-A', CHAIN, ...rule, '-j', 'RETURN');
  }
  await iptables('-A', 'OUTPUT', '!', '-o', 'lo', '-j', CHAIN);
}

/** Parses `iptables -L <chain> -v -x -n`: the rules' packet and byte counts, in order. */
export function parseChainCounters(listing: string): KernelUplink | null {
  const rows = listing
    .split('\n')
    .map((line) => /^\s*(\d+)\s+(\d+)\s+RETURN\b/.exec(line))
    .filter((match): match is RegExpExecArray => match !== null)
    .map((match) => ({ packets: Number(match[1]), bytes: Number(match[2]) }));
  if (rows.length !== KERNEL_CLASSES.length) return null;
  return Object.fromEntries(KERNEL_CLASSES.map((kind, index) => [kind, rows[index]!])) as KernelUplink;
}

/** The counters of namespace `name` now; null when they cannot be read (the namespace is gone). */
export async function readUplinkCounters(name: string): Promise<KernelUplink | null> {
  const listing = await run('ip', ['netns', 'exec', name, 'iptables', '-w', '-L', CHAIN, '-v', '-x', '-n']).then(
    (result) => result.stdout,
    () => '',
  );
  return parseChainCounters(listing);
}
