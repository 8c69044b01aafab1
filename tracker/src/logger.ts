// One JSON line per event on stderr: {"time":..., "level":..., "ns":"shoal:tracker", "msg":..., ...fields}.

export type LogLevel = 'silent' | 'error' | 'warn' | 'info' | 'debug';
const RANK: Record<LogLevel, number> = { silent: 0, error: 1, warn: 2, info: 3, debug: 4 };

export type LogFields = Record<string, string | number | boolean | null | undefined>;

export interface Logger {
  error(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  debug(msg: string, fields?: LogFields): void;
}

export function createLogger(level: LogLevel, namespace = 'shoal:tracker', write: (line: string) => void = (line) => process.stderr.write(line)): Logger {
  const threshold = RANK[level];
  const log = (at: Exclude<LogLevel, 'silent'>) => (msg: string, fields?: LogFields) => {
    if (RANK[at] > threshold) return;
    write(`${JSON.stringify({ time: new Date().toISOString(), level: at, ns: namespace, msg, ...fields })}\n`);
  };
  return { error: log('error'), warn: log('warn'), info: log('info'), debug: log('debug') };
}
