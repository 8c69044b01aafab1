// The property names the browser bundle may shorten (esbuild `mangleProps`): names our own source
// uses as properties that appear nowhere a foreign piece of code could read or write them. A name
// is foreign, and kept, when it appears in a published type of @shoal/core or @shoal/hlsjs (what
// users pass in and read back; not a public class's private members, parameter names or comments,
// which a .d.ts lists too), in hls.js's types (its loader and event contract), in the DOM or
// ECMAScript library types, in the tracker's source (the WebTorrent protocol's JSON keys), or in a
// string literal of ours (`'x' in y`, `y['x']`). Private fields, the planner's snapshot shapes and
// the rooms' internal interfaces are what is left: they cost bytes in every bundle and mean nothing
// outside it. Run after @shoal/core and @shoal/hlsjs's types are built.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = fileURLToPath(new URL('..', import.meta.url));
const read = (path, base = root) => readFileSync(join(base, path), 'utf8');
const sources = (dir, base = root) =>
  readdirSync(join(base, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(base, path)).isDirectory()) return name === 'testing' ? [] : sources(path, base);
    return /\.(ts|mjs|js)$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
const words = (text) => new Set(text.match(/[A-Za-z_$][\w$]*/g));

/**
 * The names our published types let a user read or write: every identifier and every word of a
 * string literal in them, except what TypeScript itself keeps out of reach (private members, which
 * a .d.ts lists by name only) and what names nothing a user can touch (parameter names, comments).
 */
function publishedNames(text, fileName) {
  const names = new Set();
  const isPrivate = (node) => node.modifiers?.some((modifier) => modifier.kind === ts.SyntaxKind.PrivateKeyword);
  const visit = (node) => {
    if (ts.isIdentifier(node)) {
      const { parent } = node;
      const hidden = (ts.isParameter(parent) && parent.name === node) || (ts.isClassElement(parent) && parent.name === node && isPrivate(parent));
      if (!hidden) names.add(node.text);
    } else if (ts.isStringLiteralLike(node)) {
      for (const word of words(node.text)) names.add(word);
    }
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true));
  return names;
}

/**
 * `sourceRoot`: where the sources to shorten are (another commit's, for `npm run size -- --at`);
 * the foreign types are always this tree's built ones.
 */
export function internalPropertyNames(sourceRoot = root) {
  const ours = [...sources('packages/core/src', sourceRoot), ...sources('packages/hlsjs/src', sourceRoot)].map((path) => read(path, sourceRoot)).join('\n');
  const publishedTypes = [
    ...readdirSync(join(root, 'packages/core/dist')).filter((name) => name.endsWith('.d.ts') && name !== 'testing.d.ts').map((name) => `packages/core/dist/${name}`),
    'packages/hlsjs/dist/index.d.ts',
  ];
  // Other people's types count word for word, comments and all: their contract is theirs to read.
  const foreignTypes = [
    'packages/hlsjs/node_modules/hls.js/dist/hls.d.ts',
    ...readdirSync(join(root, 'node_modules/typescript/lib')).filter((name) => /^lib\.(dom|es5|es20\d\d[\w.]*)\.d\.ts$/.test(name)).map((name) => `node_modules/typescript/lib/${name}`),
  ];
  for (const file of [...publishedTypes, ...foreignTypes]) if (!existsSync(join(root, file))) throw new Error(`internal-properties: ${file} is missing (build @shoal/core and @shoal/hlsjs first)`);
  const foreign = words([...foreignTypes.map((path) => read(path)), ...sources('tracker/src', sourceRoot).map((path) => read(path, sourceRoot))].join('\n'));
  for (const path of publishedTypes) for (const name of publishedNames(read(path), path)) foreign.add(name);
  const quoted = new Set([...ours.matchAll(/['"`]([A-Za-z_$][\w$]*)['"`]/g)].map((match) => match[1]));
  const used = new Set([
    ...[...ours.matchAll(/\.([A-Za-z_$][\w$]*)/g)].map((match) => match[1]),
    ...[...ours.matchAll(/^\s*(?:(?:readonly|private|protected|public|static)\s+)*([A-Za-z_$][\w$]*)\??[:(]/gm)].map((match) => match[1]),
  ]);
  return [...used].filter((name) => name.length > 2 && !foreign.has(name) && !quoted.has(name)).sort();
}

/** The names as one anchored pattern for esbuild's `mangleProps`. */
export const internalPropertyPattern = (sourceRoot = root) => new RegExp(`^(?:${internalPropertyNames(sourceRoot).join('|')})$`);
