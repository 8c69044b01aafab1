#!/usr/bin/env node
// shoal-manifest: writes the SHA-256 integrity manifest of an HLS folder, in PeerTube's format
// ({ "<segment file name>": "<sha256 hex>" }, or { "<file>": { "<start>-<end>": "<sha256 hex>" } }
// for EXT-X-BYTERANGE segments, end inclusive), which players read with `integrityManifestUrl` /
// `integrity`. Node only: no browser entry imports it.
//
//   shoal-manifest <folder> [--out <file>]              VOD: one shot
//   shoal-manifest <folder> --watch [--interval <ms>]   live: rewrites it as segments appear and
//                                                       drops those gone from every playlist
//
// The segments are those the media playlists (*.m3u8 under the folder) list, keyed by file name as
// the engine looks them up (names must therefore be unique across renditions). The file is replaced
// atomically (written beside it, then renamed), so a viewer never reads half a manifest.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, realpathSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const usage = 'usage: shoal-manifest <folder> [--out <file>] [--watch] [--interval <ms>]';

/** @param {string[]} argv */
function parseArgs(argv) {
  const options = { folder: undefined, out: undefined, watch: false, intervalMs: 1000 };
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === '--watch') options.watch = true;
    else if (arg === '--out') options.out = argv[++i];
    else if (arg === '--interval') options.intervalMs = Number(argv[++i]);
    else if (arg === '--help' || arg === '-h') return { help: true };
    else if (!arg.startsWith('--') && options.folder === undefined) options.folder = arg;
    else throw new Error(`unknown argument ${JSON.stringify(arg)}; ${usage}`);
  }
  if (!options.folder) throw new Error(`no folder given; ${usage}`);
  if (!Number.isInteger(options.intervalMs) || options.intervalMs < 100) throw new Error(`--interval: expected milliseconds (100 or more), got ${options.intervalMs}`);
  options.folder = resolve(options.folder);
  options.out = resolve(options.out ?? join(options.folder, 'segments-sha256.json'));
  return options;
}

/** Every .m3u8 under `folder`. */
function playlists(folder) {
  const found = [];
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) found.push(...playlists(path));
    else if (entry.name.endsWith('.m3u8')) found.push(path);
  }
  return found;
}

/**
 * The segments a media playlist lists: their path on disk and, for EXT-X-BYTERANGE, the range
 * (`length@offset`, the offset defaulting to the end of the previous range of the same file).
 * A multivariant playlist lists playlists, not segments: it yields none.
 */
export function listedSegments(playlistPath) {
  const lines = readFileSync(playlistPath, 'utf8').split(/\r?\n/);
  const segments = [];
  let pendingRange;
  const nextOffset = new Map();
  let isMedia = false;
  for (const raw of lines) {
    const line = raw.trim();
    if (line.startsWith('#EXTINF')) isMedia = true;
    if (line.startsWith('#EXT-X-BYTERANGE:')) {
      const [length, offset] = line.slice('#EXT-X-BYTERANGE:'.length).split('@').map(Number);
      pendingRange = { length, offset };
    } else if (line !== '' && !line.startsWith('#') && isMedia) {
      const uri = line.replace(/[?#].*$/, '');
      if (/^[a-z]+:\/\//i.test(uri)) throw new Error(`${playlistPath}: ${uri} is not in this folder (an absolute URL)`);
      const path = join(dirname(playlistPath), decodeURIComponent(uri));
      if (pendingRange) {
        const start = Number.isFinite(pendingRange.offset) ? pendingRange.offset : nextOffset.get(path) ?? 0;
        segments.push({ path, range: { start, end: start + pendingRange.length - 1 } });
        nextOffset.set(path, start + pendingRange.length);
      } else {
        segments.push({ path });
      }
      pendingRange = undefined;
    }
  }
  return segments;
}

const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');

/**
 * The manifest of what the playlists list now. `cache` (path → { size, mtimeMs, hash }) spares
 * hashing an unchanged whole file again, which is what keeps a live folder's rewrites cheap.
 */
export function buildManifest(folder, cache = new Map()) {
  const manifest = {};
  const owners = new Map();
  const seen = new Set();
  for (const playlist of playlists(folder)) {
    for (const { path, range } of listedSegments(playlist)) {
      const name = basename(path);
      const owner = owners.get(name);
      if (owner !== undefined && owner !== path) throw new Error(`two segments are named ${name} (${relative(folder, owner)}, ${relative(folder, path)}): the manifest keys segments by file name, so names must be unique`);
      owners.set(name, path);
      let stat;
      try {
        stat = statSync(path);
      } catch {
        continue; // listed but not there (yet, or any more): a viewer cannot get it either
      }
      const key = range ? `${path}#${range.start}-${range.end}` : path;
      seen.add(key);
      let cached = cache.get(key);
      if (!cached || cached.size !== stat.size || cached.mtimeMs !== stat.mtimeMs) {
        const bytes = readFileSync(path);
        cached = { size: stat.size, mtimeMs: stat.mtimeMs, hash: sha256(range ? bytes.subarray(range.start, range.end + 1) : bytes) };
        cache.set(key, cached);
      }
      if (range) manifest[name] = { ...(typeof manifest[name] === 'object' ? manifest[name] : {}), [`${range.start}-${range.end}`]: cached.hash };
      else manifest[name] = cached.hash;
    }
  }
  for (const key of cache.keys()) if (!seen.has(key)) cache.delete(key);
  return manifest;
}

/** Writes `manifest` to `out` atomically; returns its text. */
export function writeManifest(out, manifest) {
  const text = `${JSON.stringify(manifest)}\n`;
  const temporary = `${out}.${process.pid}.tmp`;
  writeFileSync(temporary, text);
  renameSync(temporary, out);
  return text;
}

function main() {
  let options;
  try {
    options = parseArgs(process.argv.slice(2));
  } catch (error) {
    console.error(`shoal-manifest: ${error.message}`);
    process.exit(2);
  }
  if (options.help) return console.log(usage);
  const cache = new Map();
  let written = '';
  const pass = () => {
    const manifest = buildManifest(options.folder, cache);
    const text = `${JSON.stringify(manifest)}\n`;
    if (text === written) return;
    written = writeManifest(options.out, manifest);
    console.log(`shoal-manifest: ${options.out}: ${Object.keys(manifest).length} segments`);
  };
  try {
    pass();
  } catch (error) {
    console.error(`shoal-manifest: ${error.message}`);
    process.exit(1);
  }
  if (!options.watch) return;
  // Polling, not fs.watch: it behaves the same on every file system, network mounts included.
  const timer = setInterval(() => {
    try {
      pass();
    } catch (error) {
      console.error(`shoal-manifest: ${error.message} (trying again)`);
    }
  }, options.intervalMs);
  const stop = () => {
    clearInterval(timer);
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

// Run as a command (npm's bin link included), not when a test imports it.
if (process.argv[1] && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url))) main();
