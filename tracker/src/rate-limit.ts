// The per-connection token bucket: `messageBurst` tokens, refilled at `messagesPerSecond`; a
// message costs one, an invalid one more. Plain arithmetic on the bucket the connection carries.

export interface TokenBucket {
  tokens: number;
  refilledMs: number;
}

export interface RateLimit {
  /** 0: no limit. */
  messagesPerSecond: number;
  messageBurst: number;
}

/** Refills the bucket for the time since its last refill, then takes `cost`; false when it went below zero. */
export function takeTokens(bucket: TokenBucket, limit: RateLimit, nowMs: number, cost: number): boolean {
  const elapsedMs = nowMs - bucket.refilledMs;
  if (elapsedMs > 0) {
    bucket.tokens = Math.min(limit.messageBurst, bucket.tokens + (elapsedMs * limit.messagesPerSecond) / 1000);
    bucket.refilledMs = nowMs;
  }
  bucket.tokens -= cost;
  return bucket.tokens >= 0;
}

/** Whole seconds (at least 1) until the bucket holds a token again. */
export function secondsUntilToken(bucket: TokenBucket, limit: RateLimit): number {
  return Math.max(1, Math.ceil((1 - bucket.tokens) / limit.messagesPerSecond));
}

/** A connection that keeps sending until its debt exceeds a whole burst is closed. */
export function isAbusive(bucket: TokenBucket, limit: RateLimit): boolean {
  return bucket.tokens < -limit.messageBurst;
}
