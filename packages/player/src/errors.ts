// Errors are values with a code a program can branch on and a message a person can act on.

export type PlayerErrorCode =
  | 'INVALID_OPTION'
  | 'NO_ELEMENT'
  | 'PLAYBACK_FATAL'
  | 'UNSUPPORTED'
  | 'FRAME_TIMEOUT'
  | 'FRAME_COMMAND'
  | 'FRAME_START'
  | 'UNKNOWN_COMMAND'
  | 'INVALID_COMMAND'
  | 'DESTROYED';

/** What the iframe embed answered when it refused a command or could not start: its own code and words. */
export interface FrameErrorInfo {
  code: string;
  message: string;
}

export class PlayerError extends Error {
  override readonly name = 'PlayerError';
  /** The message without its `CODE: ` prefix, for carrying the error elsewhere (the iframe protocol). */
  readonly detail: string;
  /** On errors of the frame client: the frame's own code and message. */
  readonly frameError: FrameErrorInfo | undefined;

  constructor(
    readonly code: PlayerErrorCode,
    message: string,
    options?: { cause?: unknown; frameError?: FrameErrorInfo },
  ) {
    super(`${code}: ${message}`, options);
    this.detail = message;
    this.frameError = options?.frameError;
  }
}
