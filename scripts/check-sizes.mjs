// `node scripts/check-sizes.mjs` (a step of `npm test`): the team's size limits, kept in the tree.
// Fails, naming file:line and the size, on a source file over 400 lines, a class over 300, or a
// function over 100: a declaration, a method, constructor or accessor, or a function expression or
// arrow function assigned to a name (a variable, a class field, an object property, `x.y = ...`).
// Callbacks passed as arguments are not measured on their own: their lines count toward the
// function and the file around them. That exempts the browser specs' test bodies
// (`test('...', async () => {...})`), which read best as one story; their files are still measured.
// Sources: the TypeScript and JavaScript of packages/*/src, tracker/src, e2e/src, e2e/browser-test,
// sim/src and scripts/ (without their test folders). `--root DIR` checks another tree laid out alike,
// with no allowlist.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const limits = { file: 400, class: 300, function: 100 };

const sourceDirs = ['packages/*/src', 'tracker/src', 'e2e/src', 'e2e/browser-test', 'sim/src', 'scripts'];
const sourceFile = /\.(ts|mts|js|mjs)$/;
const skippedDirs = new Set(['node_modules', 'dist', 'test']);

/**
 * Offenders inside packages/core, which is being rewritten (issue 36): each with its size when it
 * was listed. One that grows past that size fails; one that is gone or back under its limit fails
 * too, until its line here is removed, so this list only shrinks.
 */
export const allowed = [
  // Split into a top-level class in 'faaf99f', whose subtitle loads then failed 2 of 4 runs of the
  // iframe spec's caption switch (French cue never shown); restored as it was until the split is redone.
  { file: 'packages/hlsjs/src/fragment-loader.ts', kind: 'function', name: 'createFragmentLoaderClass', lines: 111 },
];

function filesUnder(root, dir) {
  const full = join(root, dir);
  if (!existsSync(full)) return [];
  return readdirSync(full, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return skippedDirs.has(entry.name) ? [] : filesUnder(root, path);
    return sourceFile.test(entry.name) ? [path] : [];
  });
}

export function sourceFiles(root) {
  return sourceDirs.flatMap((pattern) => {
    const [first, star, ...rest] = pattern.split('/');
    if (star !== '*') return filesUnder(root, pattern);
    return readdirSync(join(root, first), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .flatMap((entry) => filesUnder(root, join(first, entry.name, ...rest)));
  });
}

/** The name an assigned function goes by, or undefined for a callback passed as an argument. */
function assignedName(node, sourceFile) {
  const parent = node.parent;
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyDeclaration(parent) || ts.isPropertyAssignment(parent)) && parent.initializer === node) {
    return parent.name.getText(sourceFile);
  }
  if (ts.isBinaryExpression(parent) && parent.operatorToken.kind === ts.SyntaxKind.EqualsToken && parent.right === node) {
    return parent.left.getText(sourceFile);
  }
  return undefined;
}

/** Every file, class and named function of one source text, with its first line and its length in lines. */
export function measure(path, text) {
  const sourceFile = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const lineOf = (position) => sourceFile.getLineAndCharacterOfPosition(position).line + 1;
  const lines = text.endsWith('\n') ? lineOf(text.length) - 1 : lineOf(text.length);
  const items = [{ file: path, kind: 'file', name: '', line: 1, lines }];
  const visit = (node, className) => {
    let kind;
    let name;
    if (ts.isClassDeclaration(node) || ts.isClassExpression(node)) {
      kind = 'class';
      name = node.name?.text ?? assignedName(node, sourceFile) ?? '(anonymous class)';
      className = name;
    } else if (ts.isFunctionDeclaration(node)) {
      kind = 'function';
      name = node.name?.text ?? 'default';
    } else if (ts.isMethodDeclaration(node) || ts.isGetAccessor(node) || ts.isSetAccessor(node) || ts.isConstructorDeclaration(node)) {
      kind = 'function';
      const own = ts.isConstructorDeclaration(node) ? 'constructor' : node.name.getText(sourceFile);
      name = className && ts.isClassLike(node.parent) ? `${className}.${own}` : own;
    } else if (ts.isArrowFunction(node) || ts.isFunctionExpression(node)) {
      name = assignedName(node, sourceFile);
      if (name !== undefined) kind = 'function';
      if (className && ts.isPropertyDeclaration(node.parent)) name = `${className}.${name}`;
    }
    if (kind) {
      const line = lineOf(node.getStart(sourceFile));
      items.push({ file: path, kind, name, line, lines: lineOf(node.getEnd()) - line + 1 });
    }
    ts.forEachChild(node, (child) => visit(child, className));
  };
  visit(sourceFile, undefined);
  return items;
}

const sameItem = (allow, item) => allow.file === item.file && allow.kind === item.kind && (allow.name ?? '') === item.name;

/** What breaks the limits in `root`, against the allowlist: failures, and the allowed offenders as they are now. */
export function checkSizes(root, allowlist = allowed) {
  const offenders = sourceFiles(root)
    .flatMap((path) => measure(path, readFileSync(join(root, path), 'utf8')))
    .filter((item) => item.lines > limits[item.kind]);
  const failures = [];
  const tolerated = [];
  for (const item of offenders) {
    const entry = allowlist.find((allow) => sameItem(allow, item));
    const where = `${item.file}:${item.line}`;
    const size = `${item.kind} ${item.name ? `${item.name} ` : ''}is ${item.lines} lines (limit ${limits[item.kind]})`;
    if (!entry) failures.push(`${where}: ${size}`);
    else if (item.lines > entry.lines) failures.push(`${where}: ${size}, grown from the ${entry.lines} it is allowed: split it by job`);
    else tolerated.push(`${where}: ${size}, allowed up to ${entry.lines} for now`);
  }
  for (const entry of allowlist) {
    if (!offenders.some((item) => sameItem(entry, item))) {
      failures.push(`${entry.file}: ${entry.kind} ${entry.name ? `${entry.name} ` : ''}is no longer over its limit (or gone): remove it from the allowlist in scripts/check-sizes.mjs`);
    }
  }
  return { failures, tolerated };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const rootAt = process.argv.indexOf('--root');
  const root = rootAt > 0 ? process.argv[rootAt + 1] : fileURLToPath(new URL('..', import.meta.url));
  const { failures, tolerated } = checkSizes(root, rootAt > 0 ? [] : allowed);
  for (const line of tolerated) console.log(`allowed  ${line}`);
  for (const line of failures) console.error(`OVER     ${line}`);
  const limitsLine = `files ${limits.file}, classes ${limits.class}, functions ${limits.function} lines`;
  if (failures.length > 0) {
    console.error(`sizes: ${failures.length} over the limits (${limitsLine}) in ${relative(process.cwd(), root) || '.'}`);
    process.exit(1);
  }
  console.log(`sizes: every source within the limits (${limitsLine})${tolerated.length ? `, ${tolerated.length} allowed for now` : ''}`);
}
