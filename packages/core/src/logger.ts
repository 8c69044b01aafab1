// One logger for the engine, namespaced (`shoal:core:engine`) and off by default. A disabled
// logger costs one boolean test per call, so hot paths may log freely.

export type LogSink = (namespace: string, message: string, ...details: unknown[]) => void;

export interface Logger {
  (message: string, ...details: unknown[]): void;
  readonly namespace: string;
}

let enabledPatterns: RegExp[] = [];
let sink: LogSink = (namespace, message, ...details) => console.debug(`[${namespace}] ${message}`, ...details);
const loggers: { namespace: string; enabled: boolean }[] = [];

function matches(namespace: string): boolean {
  return enabledPatterns.some((pattern) => pattern.test(namespace));
}

/**
 * Turns logging on for namespaces matching a comma-separated list of globs
 * (`shoal:*`, `shoal:core:peer,shoal:core:engine`); an empty string turns it off.
 */
export function enableLogging(namespaces: string, logSink?: LogSink): void {
  enabledPatterns = namespaces
    .split(',')
    .map((glob) => glob.trim())
    .filter(Boolean)
    .map((glob) => new RegExp(`^${glob.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`));
  if (logSink) sink = logSink;
  for (const state of loggers) state.enabled = matches(state.namespace);
}

export function createLogger(namespace: string): Logger {
  const state = { namespace, enabled: matches(namespace) };
  loggers.push(state);
  const log = (message: string, ...details: unknown[]) => {
    if (state.enabled) sink(namespace, message, ...details);
  };
  return Object.assign(log, { namespace });
}
