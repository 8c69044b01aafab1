// Errors are values with a code a program can branch on and a message a person can act on.

export type PlayerErrorCode =
  | 'INVALID_OPTION'
  | 'NO_ELEMENT'
  | 'PLAYBACK_FATAL'
  | 'UNSUPPORTED'
  | 'FRAME_TIMEOUT'
  | 'FRAME_COMMAND';

export class PlayerError extends Error {
  override readonly name = 'PlayerError';
  constructor(
    readonly code: PlayerErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`${code}: ${message}`, options);
  }
}
