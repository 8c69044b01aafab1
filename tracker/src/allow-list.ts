// The info_hash allow-list file: one info_hash per line as 40 hex digits; `#` starts a comment.

import { readFileSync } from 'node:fs';
import { hexToBinaryId } from './protocol.js';

export class AllowListError extends Error {
  readonly code = 'TRACKER_ALLOW_LIST';
  constructor(message: string) {
    super(message);
    this.name = 'AllowListError';
  }
}

/** Reads the file into binary info_hashes; throws naming the first bad line. */
export function readInfoHashAllowList(path: string): Set<string> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new AllowListError(`info_hash allow-list ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const allowed = new Set<string>();
  text.split('\n').forEach((rawLine, index) => {
    const line = rawLine.replace(/#.*/, '').trim();
    if (!line) return;
    const id = hexToBinaryId(line);
    if (id === null) throw new AllowListError(`info_hash allow-list ${path}:${index + 1}: expected 40 hex digits, got ${JSON.stringify(line.slice(0, 60))}`);
    allowed.add(id);
  });
  return allowed;
}
