// The package's version, read once from its package.json (two levels up from src/ or dist/).

import { readFileSync } from 'node:fs';

export const TRACKER_VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
