// The property names our code exchanges with code that is not ours (the DOM, ECMAScript's library,
// hls.js), found with TypeScript's type checker: a name we read or write on a value whose type
// they declare (or no type declares: `any`, an index signature), a member of an object or class
// of ours that we hand them (an argument, a contextually typed object literal, a class that
// implements their interface), and every member of a type we cast a value to or guard it as (how
// code reads what it cannot type). Their own names that we never touch are no business of the
// bundle's: `transfer`, `channel` or `closed` in our classes mean nothing to the DOM, which
// declares them too. internal-properties.mjs keeps these names, and shortens the rest of ours.
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Library functions that read their argument's own properties whatever its type (a generic's argument is otherwise only stored or passed on). */
const READS_ANY_ARGUMENT = /^(Object|JSON|Reflect)\.|^structuredClone$/;
/** How deep into the members of a value we hand over its own members count (an options object's ICE servers' urls). */
const DEPTH = 3;

/** `sourceRoot`'s @shoal/core and @shoal/hlsjs sources (`ourPaths`, relative to it); hls.js's types are this tree's. */
export function exchangedNames(sourceRoot, ourPaths) {
  const files = ourPaths.map((path) => `${sourceRoot}/${path}`);
  const ours = new Set(files);
  const program = ts.createProgram(files, {
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    strict: true,
    noEmit: true,
    types: [],
    paths: {
      '@shoal/core': [`${sourceRoot}/packages/core/src/index.ts`],
      '@shoal/core/webrtc': [`${sourceRoot}/packages/core/src/webrtc.ts`],
      'hls.js': [`${root}packages/hlsjs/node_modules/hls.js/dist/hls.d.ts`],
    },
  });
  const checker = program.getTypeChecker();
  const isOurs = (declaration) => ours.has(declaration.getSourceFile().fileName);
  const foreignSymbol = (symbol) => !symbol?.declarations?.length || symbol.declarations.some((declaration) => !isOurs(declaration));
  /** A type declared outside our sources (a library's or hls.js's), not an anonymous one of ours. */
  const foreignType = (type) => {
    const declaration = (type.aliasSymbol ?? type.symbol)?.declarations?.[0];
    return declaration !== undefined && !isOurs(declaration);
  };
  const names = new Set();

  /** The member names of a value of `type` that we hand over, `depth` levels down (of our own types; theirs name only theirs). */
  const handOver = (type, depth, seen = new Set()) => {
    if (!type || depth < 0 || seen.has(type)) return;
    seen.add(type);
    if (type.isUnionOrIntersection()) return type.types.forEach((part) => handOver(part, depth, seen));
    const typeArguments = type.aliasTypeArguments ?? (type.objectFlags & ts.ObjectFlags.Reference ? checker.getTypeArguments(type) : []);
    if (foreignType(type)) {
      // A value of their type may be an object of ours that they read as theirs (a class of ours as hls.js's loader).
      for (const property of checker.getPropertiesOfType(type)) names.add(property.name);
      for (const argument of typeArguments) handOver(argument, depth, seen);
      return;
    }
    for (const property of checker.getPropertiesOfType(type)) {
      names.add(property.name);
      const at = property.valueDeclaration ?? property.declarations?.[0];
      if (at) handOver(checker.getTypeOfSymbolAtLocation(property, at), depth - 1, seen);
    }
    for (const signature of [...type.getCallSignatures(), ...type.getConstructSignatures()]) handOver(signature.getReturnType(), depth - 1, seen);
    for (const argument of typeArguments) handOver(argument, depth, seen);
  };

  /** Whether the parameter's declared type names a type parameter of its signature (or of the interface or class around it). */
  const generic = (signature, parameter) => {
    const typeText = parameter?.type?.getText() ?? '';
    const typeParameters = [...(signature.typeParameters ?? []), ...(signature.parent?.typeParameters ?? [])];
    return typeParameters.some((typeParameter) => new RegExp(`\\b${typeParameter.name.text}\\b`).test(typeText));
  };

  const visit = (node) => {
    if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.name)) {
      if (foreignSymbol(checker.getSymbolAtLocation(node.name))) names.add(node.name.text);
    } else if (ts.isBindingElement(node) && ts.isObjectBindingPattern(node.parent) && !node.dotDotDotToken) {
      const name = node.propertyName ?? node.name;
      if (ts.isIdentifier(name) && foreignSymbol(checker.getTypeAtLocation(node.parent).getProperty(name.text))) names.add(name.text);
    } else if (ts.isObjectLiteralExpression(node)) {
      // An object literal that is theirs by its contextual type (or goes where any object may): every member is read by them.
      const context = checker.getContextualType(node);
      const parts = context?.isUnion() ? context.types : context ? [context] : [];
      const theirs = parts.some((part) => part.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown | ts.TypeFlags.NonPrimitive) || foreignType(part));
      for (const member of node.properties) {
        if (!member.name || !ts.isIdentifier(member.name)) continue;
        if (theirs || parts.some((part) => part.getProperty(member.name.text) && foreignSymbol(part.getProperty(member.name.text)))) names.add(member.name.text);
      }
    } else if (ts.isCallExpression(node) || ts.isNewExpression(node)) {
      const signature = checker.getResolvedSignature(node)?.declaration;
      const callee = node.expression.getText();
      (node.arguments ?? []).forEach((argument, index) => {
        const parameter = signature?.parameters?.[Math.min(index, signature.parameters.length - 1)];
        // Ours too where the parameter takes any object (`send(message: object)`: the tracker socket's JSON).
        const untyped = parameter && checker.getTypeAtLocation(parameter).flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown | ts.TypeFlags.NonPrimitive);
        if (signature && isOurs(signature) && !untyped) return;
        if (signature && !untyped && generic(signature, parameter) && !READS_ANY_ARGUMENT.test(callee)) return;
        handOver(checker.getTypeAtLocation(argument), DEPTH);
      });
    } else if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.EqualsToken && ts.isPropertyAccessExpression(node.left)) {
      if (foreignSymbol(checker.getSymbolAtLocation(node.left.name))) handOver(checker.getTypeAtLocation(node.right), DEPTH);
    } else if ((ts.isAsExpression(node) || ts.isTypeAssertionExpression(node)) && !(ts.isTypeReferenceNode(node.type) && node.type.getText() === 'const')) {
      handOver(checker.getTypeFromTypeNode(node.type), DEPTH);
    } else if (ts.isTypePredicateNode(node) && node.type) {
      handOver(checker.getTypeFromTypeNode(node.type), DEPTH);
    } else if (ts.isHeritageClause(node)) {
      // A class of ours that implements or extends theirs is read as theirs.
      for (const heritage of node.types) {
        const type = checker.getTypeFromTypeNode(heritage);
        if (foreignSymbol(type.symbol)) handOver(type, 0);
      }
    }
    ts.forEachChild(node, visit);
  };
  for (const file of files) visit(program.getSourceFile(file));
  return names;
}
