// Under `npx shoal-tracker` (or `npm exec`, or an npm script) the tracker is npm's grandchild:
// npm runs `sh -c 'shoal-tracker …'`, which runs node. npm forwards only SIGINT and SIGTERM to
// its child (`forwardedSignals` in @npmcli/run-script's signal-manager.js); any other signal,
// SIGHUP included, ends npm alone and leaves the tracker running without it, holding its port.
// So under npm the tracker watches the npm process and stops once it is gone.

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

/** What runs between npm and the tracker (the script shell); anything else is the wrapper. */
const SHELLS = new Set(['sh', 'dash', 'bash', 'zsh', 'ash', 'ksh', 'mksh', 'busybox']);
const MAX_SHELLS = 3;

interface ProcessEntry {
  ppid: number;
  name: string;
  /** Exited, and not yet reaped by its parent. */
  zombie: boolean;
}

function processEntry(pid: number): ProcessEntry | null {
  if (process.platform === 'linux') {
    try {
      // "pid (name) state ppid …": the name may hold spaces and parentheses.
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const nameEnd = stat.lastIndexOf(')');
      const [state, ppid] = stat.slice(nameEnd + 2).split(' ');
      return { ppid: Number(ppid), name: stat.slice(stat.indexOf('(') + 1, nameEnd), zombie: state === 'Z' || state === 'X' };
    } catch {
      return null;
    }
  }
  try {
    // args, not comm: npm's title ("npm exec …") replaces its arguments, not its command name.
    const [ppid = '', state = '', command = ''] = execFileSync('ps', ['-o', 'ppid=,state=,args=', '-p', String(pid)], { encoding: 'utf8' }).trim().split(/\s+/);
    return { ppid: Number(ppid), name: basename(command), zombie: state.startsWith('Z') };
  } catch {
    return null;
  }
}

export interface NpmWrapper {
  pid: number;
  /** Its process name (npm titles itself, e.g. "npm exec shoal-"). */
  name: string;
}

/** The npm process this one runs under, through its script shell; null when npm did not start it. */
export function findNpmWrapper(env: NodeJS.ProcessEnv = process.env): NpmWrapper | null {
  // npm's run-script sets this for every script and for npx / npm exec (and it is inherited
  // further down, so the process found must also be npm itself).
  if (!env.npm_lifecycle_event) return null;
  let pid = process.ppid;
  for (let shells = 0; shells <= MAX_SHELLS; shells++) {
    const entry = processEntry(pid);
    if (!entry) return null;
    // npm titles itself "npm <command> …".
    if (!SHELLS.has(entry.name)) return /^npm( |$)/.test(entry.name) ? { pid, name: entry.name } : null;
    pid = entry.ppid;
  }
  return null;
}

/**
 * Calls `onGone` once, when the wrapper has exited (or this process's parent changed: the shell
 * between them went too). Polls every `everyMs`; returns a function that stops watching.
 */
export function watchNpmWrapper(wrapper: NpmWrapper, onGone: () => void, everyMs = 500): () => void {
  const parent = process.ppid;
  const timer = setInterval(() => {
    const entry = processEntry(wrapper.pid);
    // Another name under that pid: npm exited and the pid was reused.
    if (entry && !entry.zombie && entry.name === wrapper.name && process.ppid === parent) return;
    clearInterval(timer);
    onGone();
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
