// Who listens on a TCP port, read from /proc (Linux). uWebSockets.js listens with SO_REUSEPORT,
// so a second process of the same user gets the same port without an error and the kernel
// splits new connections between the two; only /proc shows that it happened, and by whom.

import { readFileSync, readdirSync, readlinkSync } from 'node:fs';

/** A process listening on the port; `pid` null when this user may not see whose socket it is. */
export interface PortHolder {
  pid: number | null;
  /** Its command line, shortened. */
  command: string | null;
}

interface ListeningSocket {
  /** The local address as /proc writes it (hex); all zeros for 0.0.0.0 and ::. */
  address: string;
  inode: string;
}

const LISTEN_STATE = '0A';
const COMMAND_CHARS = 120;

/** Sockets listening on `port` on any address; null where /proc/net cannot be read (not Linux). */
function listeningSockets(port: number): ListeningSocket[] | null {
  const sockets: ListeningSocket[] = [];
  let readable = false;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    readable = true;
    for (const line of text.split('\n').slice(1)) {
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10 || fields[3] !== LISTEN_STATE) continue;
      const [address, portHex] = fields[1]!.split(':');
      if (Number.parseInt(portHex!, 16) === port) sockets.push({ address: address!, inode: fields[9]! });
    }
  }
  return readable ? sockets : null;
}

/** Inodes of the sockets among a process's descriptors ('self': this process, all its threads). */
function socketInodes(pid: string): Set<string> {
  const inodes = new Set<string>();
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return inodes;
  }
  for (const fd of fds) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match) inodes.add(match[1]!);
    } catch {
      // closed meanwhile
    }
  }
  return inodes;
}

function commandOf(pid: string): string | null {
  try {
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
    return command.length > COMMAND_CHARS ? `${command.slice(0, COMMAND_CHARS - 1)}…` : command;
  } catch {
    return null;
  }
}

/** The processes holding these socket inodes, as far as /proc lets this user see them. */
export function holdersOf(inodes: ReadonlySet<string>): PortHolder[] {
  const holders: PortHolder[] = [];
  let entries: string[] = [];
  try {
    entries = readdirSync('/proc');
  } catch {
    // no /proc: unknown holder
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    for (const inode of socketInodes(entry)) {
      if (!inodes.has(inode)) continue;
      holders.push({ pid: Number(entry), command: commandOf(entry) });
      break;
    }
  }
  return holders.length > 0 ? holders : [{ pid: null, command: null }];
}

/**
 * Inodes of the Unix sockets bound to abstract `name` (/proc/net/unix shows the leading NUL,
 * and the NULs Node pads the name with, as '@').
 */
export function abstractSocketInodes(name: string): Set<string> {
  const inodes = new Set<string>();
  let text = '';
  try {
    text = readFileSync('/proc/net/unix', 'utf8');
  } catch {
    return inodes;
  }
  for (const line of text.split('\n').slice(1)) {
    // Num RefCount Protocol Flags Type St Inode Path
    const fields = line.trim().split(/\s+/);
    const path = fields[7];
    if (path && path.replace(/@+$/, '') === `@${name}`) inodes.add(fields[6]!);
  }
  return inodes;
}

const isWildcard = (hexAddress: string) => /^0+$/.test(hexAddress);

/**
 * Processes other than this one listening on `port` where a client of ours could land: on the
 * same address, or either side on every address. Empty when there are none; null where /proc
 * cannot tell.
 */
export function otherListeners(port: number): PortHolder[] | null {
  const sockets = listeningSockets(port);
  if (!sockets) return null;
  const own = socketInodes('self');
  const ours = sockets.filter((socket) => own.has(socket.inode));
  const others = sockets.filter((socket) => !own.has(socket.inode));
  const overlapping = others.filter(
    (other) => ours.length === 0 || isWildcard(other.address) || ours.some((mine) => isWildcard(mine.address) || mine.address === other.address),
  );
  if (overlapping.length === 0) return [];
  return holdersOf(new Set(overlapping.map((socket) => socket.inode)));
}
