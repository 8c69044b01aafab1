// Errors are values with a code a program can branch on and a message a person can act on.

export type ShoalErrorCode =
  | 'INVALID_OPTION'
  | 'HTTP_STATUS'
  | 'HTTP_NETWORK'
  | 'ABORTED'
  | 'DESTROYED'
  | 'INTEGRITY_MANIFEST'
  | 'TRACKER'
  /** WebRTC is missing, switched off or fails in this environment: P2P cannot run, HTTP plays on. */
  | 'WEBRTC_UNAVAILABLE';

export class ShoalError extends Error {
  override readonly name = 'ShoalError';
  constructor(
    readonly code: ShoalErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`${code}: ${message}`, options);
  }
}

export function isShoalError(value: unknown, code?: ShoalErrorCode): value is ShoalError {
  return value instanceof ShoalError && (code === undefined || value.code === code);
}
