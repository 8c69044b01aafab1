// The property names the browser bundle may shorten (esbuild `mangleProps`): names our own source
// uses as properties that appear nowhere a foreign piece of code could read or write them. A name
// is foreign, and kept, when it names a member in a published type of @shoal/core or @shoal/hlsjs
// (what users pass in and read back; a public class's private members aside); when our code
// exchanges it with the DOM, ECMAScript's library or hls.js (exchanged-names.mjs: what the type
// checker sees us read and write on their values, hand them, or cast to; the WebTorrent
// protocol's JSON keys among them, handed to JSON.stringify and read off JSON.parse's objects);
// when the runtime calls it unasked (IMPLICIT_PROTOCOL); or when it is a string literal in our
// code (`'x' in y`, `y['x']`). Parameter names and comments name nothing and count nowhere.
// Private fields, the planner's snapshot shapes and the interfaces between the engine's modules
// are what is left: they cost bytes in every bundle and mean nothing outside it. Run after
// @shoal/core and @shoal/hlsjs's types are built.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { exchangedNames } from './exchanged-names.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const read = (path, base = root) => readFileSync(join(base, path), 'utf8');
const sources = (dir, base = root) =>
  readdirSync(join(base, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(base, path)).isDirectory()) return name === 'testing' ? [] : sources(path, base);
    return /\.(ts|mjs|js)$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });

/**
 * Names the runtime calls or reads on an object of ours without our code naming them there (a
 * thenable's `then`, `${x}`'s toString, JSON.stringify's toJSON, the iterator protocol's, an
 * error's): kept whether or not the type checker sees them exchanged.
 */
const IMPLICIT_PROTOCOL = ['then', 'toString', 'valueOf', 'toJSON', 'next', 'return', 'throw', 'done', 'value', 'handleEvent', 'length', 'constructor', 'prototype', 'name', 'message', 'stack', 'cause'];

/**
 * The names a published type file lets other code use: its identifiers and quoted member names.
 * Not its parameter names and comments, which name nothing anyone can read or write, nor a class's
 * private members, which a .d.ts lists by name only and TypeScript keeps out of reach.
 */
function declaredNames(path) {
  const names = new Set();
  const isPrivate = (node) => node.modifiers?.some((modifier) => modifier.kind === ts.SyntaxKind.PrivateKeyword);
  const visit = (node) => {
    const { parent } = node;
    if (ts.isIdentifier(node)) {
      const hidden = (ts.isParameter(parent) && parent.name === node) || (ts.isClassElement(parent) && parent.name === node && isPrivate(parent));
      if (!hidden) names.add(node.text);
    } else if (ts.isStringLiteral(node) && parent.name === node) {
      names.add(node.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile(path, read(path), ts.ScriptTarget.Latest, true));
  return names;
}

/**
 * What our code says of properties, from its parsed source: `members`, the names it reads, writes
 * or declares as members (`a.x`, `{ x: 1 }`, `{ x }`, `const { x } = a`, `x: T` in a type or class);
 * `literals`, its string literals that could name one at run time (`'x' in y`, `y['x']`), not
 * literal types (`Pick<T, 'x'>`, `T['x']`), which the bundle drops with the types. Comments aside.
 */
function ourNames(files) {
  const members = new Set();
  const literals = new Set();
  const member = (name) => name && ts.isIdentifier(name) && members.add(name.text);
  const visit = (node) => {
    if (ts.isStringLiteralLike(node) && !ts.isLiteralTypeNode(node.parent) && /^[A-Za-z_$][\w$]*$/.test(node.text)) literals.add(node.text);
    if (ts.isPropertyAccessExpression(node)) member(node.name);
    else if (ts.isObjectLiteralElement(node) || ts.isClassElement(node) || ts.isTypeElement(node)) member(node.name);
    else if (ts.isBindingElement(node) && ts.isObjectBindingPattern(node.parent)) member(node.propertyName ?? node.name);
    ts.forEachChild(node, visit);
  };
  for (const [path, text] of files) visit(ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true));
  return { members, literals };
}

/**
 * `sourceRoot`: where the sources to shorten are (another commit's, for `npm run size -- --at`);
 * the foreign types are always this tree's built ones.
 */
export function internalPropertyNames(sourceRoot = root) {
  const ourPaths = [...sources('packages/core/src', sourceRoot), ...sources('packages/hlsjs/src', sourceRoot)];
  const publishedTypes = [
    ...readdirSync(join(root, 'packages/core/dist')).filter((name) => name.endsWith('.d.ts') && name !== 'testing.d.ts').map((name) => `packages/core/dist/${name}`),
    'packages/hlsjs/dist/index.d.ts',
  ];
  const hlsTypes = 'packages/hlsjs/node_modules/hls.js/dist/hls.d.ts';
  for (const file of [...publishedTypes, hlsTypes]) if (!existsSync(join(root, file))) throw new Error(`internal-properties: ${file} is missing (build @shoal/core and @shoal/hlsjs first)`);
  const foreign = new Set(IMPLICIT_PROTOCOL);
  for (const name of exchangedNames(sourceRoot.replace(/\/$/, ''), ourPaths)) foreign.add(name);
  for (const path of publishedTypes) for (const name of declaredNames(path)) foreign.add(name);
  const { members, literals } = ourNames(ourPaths.map((path) => [path, read(path, sourceRoot)]));
  return [...members].filter((name) => name.length > 2 && !foreign.has(name) && !literals.has(name)).sort();
}

/** The names as one anchored pattern for esbuild's `mangleProps`. */
export const internalPropertyPattern = (sourceRoot = root) => new RegExp(`^(?:${internalPropertyNames(sourceRoot).join('|')})$`);
