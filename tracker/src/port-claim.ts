// Taking a port for this process alone. uWS listens with SO_REUSEPORT, which the tracker needs
// (its worker threads share the port; a certificate reload opens a second listener before
// closing the first), but which also lets a second tracker of the same user listen on the same
// port without an error, and the kernel then splits the swarm between two trackers that do not
// know each other. (uWS's exclusive-port option cannot be given a host.) So a claim is three
// steps: a lock that only one tracker can hold per address (a Unix socket in Linux's abstract
// namespace, which, like the port, belongs to the network namespace and goes with the process);
// a plain socket trying the port, which binds only where nobody listens (any other program);
// and after listening, a look in /proc for anyone who got onto the port meanwhile.

import { createServer, type Server } from 'node:net';
import { ConfigError } from './config.js';
import { abstractSocketInodes, holdersOf, otherListeners, type PortHolder } from './port-holders.js';

export type PortSetting = 'port' | 'metricsPort';

/** One address the tracker listens on, and the setting that gave it. */
export interface PortAddress {
  setting: PortSetting;
  host: string;
  port: number;
}

export class PortInUseError extends Error {
  readonly code = 'TRACKER_PORT_IN_USE';
  constructor(message: string) {
    super(message);
    this.name = 'PortInUseError';
  }
}

/** A claimed port: release it when the tracker stops listening there. */
export interface PortClaim {
  release(): void;
}

const FLAGS: Record<PortSetting, string> = { port: '--port', metricsPort: '--metrics-port' };

function whoHolds(holders: readonly PortHolder[] | null): string {
  const known = (holders ?? []).filter((holder) => holder.pid !== null);
  if (known.length === 0) return 'another process';
  return known.map((holder) => `pid ${holder.pid}${holder.command ? ` (${holder.command})` : ''}`).join(', ');
}

function inUse(setting: PortSetting, host: string, port: number, holders: readonly PortHolder[] | null): PortInUseError {
  const pids = (holders ?? []).flatMap((holder) => (holder.pid === null ? [] : [holder.pid]));
  const stop = pids.length > 0 ? `stop it first (kill ${pids.join(' ')})` : `find it with \`ss -ltnp 'sport = :${port}'\` and stop it first`;
  return new PortInUseError(
    `\`${setting}\`: port ${port} on ${host} is already in use by ${whoHolds(holders)}. ` +
      `Two trackers on one port would split the swarm between them. If it is a tracker started earlier, ${stop}; ` +
      `or choose another port with ${FLAGS[setting]}.`,
  );
}

const lockName = (host: string, port: number) => `shoal-tracker/${host}:${port}`;

/** Holds the lock of host:port until released; null where there are no abstract sockets (not Linux). */
function lockPort(setting: PortSetting, host: string, port: number): Promise<Server | null> {
  if (process.platform !== 'linux') return Promise.resolve(null);
  return new Promise((resolve, reject) => {
    const lock = createServer();
    lock.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EADDRINUSE') return resolve(null);
      reject(inUse(setting, host, port, holdersOf(abstractSocketInodes(lockName(host, port)))));
    });
    lock.listen({ path: `\0${lockName(host, port)}` }, () => resolve(lock.unref()));
  });
}

/** Resolves when nothing listens on host:port; rejects with a PortInUseError naming who does. */
function probePort(setting: PortSetting, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') return reject(inUse(setting, host, port, otherListeners(port)));
      if (error.code === 'EACCES') return reject(new ConfigError(`\`${setting}\`: port ${port} needs privileges (below 1024: root, or CAP_NET_BIND_SERVICE)`));
      if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND') {
        return reject(new ConfigError(`\`${setting === 'port' ? 'host' : 'metricsHost'}\`: ${host} is not an address of this machine`));
      }
      reject(new ConfigError(`\`${setting}\`: cannot listen on ${host}:${port}: ${error.message}`));
    });
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}

async function claimPort({ setting, host, port }: PortAddress): Promise<PortClaim> {
  const lock = await lockPort(setting, host, port);
  const release = () => void lock?.close();
  try {
    await probePort(setting, host, port);
  } catch (error) {
    release();
    throw error;
  }
  return { release };
}

/** Claims every address before listening; rejects with a PortInUseError naming who holds one. */
export async function claimPorts(addresses: readonly PortAddress[]): Promise<PortClaim> {
  const claims: PortClaim[] = [];
  const release = () => {
    for (const claim of claims.splice(0)) claim.release();
  };
  try {
    for (const address of addresses) claims.push(await claimPort(address));
  } catch (error) {
    release();
    throw error;
  }
  return { release };
}

/** After listening: throws a PortInUseError when another process listens on one of the ports too. */
export function assertSoleListener(addresses: readonly PortAddress[]): void {
  for (const { setting, host, port } of addresses) {
    const others = otherListeners(port);
    if (others && others.length > 0) throw inUse(setting, host, port, others);
  }
}
