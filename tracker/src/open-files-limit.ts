// Each peer holds a file descriptor. Node itself raises the soft RLIMIT_NOFILE toward the hard
// limit while starting (node.cc PlatformInit); where that fell short, and since JS cannot call
// setrlimit(2), the tracker asks util-linux's `prlimit` to raise its own soft limit to the hard
// limit (allowed without privileges), then reads back what it got.

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

export interface OpenFilesLimit {
  soft: number;
  hard: number;
  /** What happened, in one phrase for the start-up log. */
  note: string;
}

function parseLimit(value: string | undefined): number {
  if (value === undefined) return NaN;
  return value === 'unlimited' ? Infinity : Number(value);
}

export function readOpenFilesLimit(): { soft: number; hard: number } {
  const limits = readFileSync('/proc/self/limits', 'utf8');
  const line = limits.split('\n').find((entry) => entry.startsWith('Max open files'));
  const [soft, hard] = line?.slice('Max open files'.length).trim().split(/\s+/) ?? [];
  return { soft: parseLimit(soft), hard: parseLimit(hard) };
}

export function raiseOpenFilesLimit(): OpenFilesLimit {
  let before: { soft: number; hard: number };
  try {
    before = readOpenFilesLimit();
  } catch {
    return { soft: NaN, hard: NaN, note: 'unknown (no /proc/self/limits); set it with `ulimit -n` before starting' };
  }
  if (!(before.soft < before.hard)) return { ...before, note: 'soft limit at the hard limit (Node raises it at start-up); raise the hard limit with `ulimit -Hn` / LimitNOFILE for more' };
  const target = Number.isFinite(before.hard) ? String(before.hard) : 'unlimited';
  try {
    execFileSync('prlimit', ['--pid', String(process.pid), `--nofile=${target}:${target}`], { stdio: 'ignore', timeout: 5000 });
  } catch {
    return { ...before, note: `could not raise the soft limit (prlimit unavailable or refused); run \`ulimit -n ${target}\` before starting` };
  }
  const after = readOpenFilesLimit();
  return { ...after, note: after.soft > before.soft ? `raised soft limit from ${before.soft}` : 'raise did not take effect; use `ulimit -n`' };
}
