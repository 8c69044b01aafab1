// The real Clock: the browser's (or Node's) timers on one time base, performance.now(), the
// monotonic one that hls.js's own load stats use too. Everything in core that needs time gets it
// through a Clock, this one unless a test or the simulator passes a virtual one.
import type { Clock } from '../types.js';

export const realClock: Clock = {
  now: () => performance.now(),
  setTimeout: (callback, delayMs) => globalThis.setTimeout(callback, delayMs),
  clearTimeout: (timer) => globalThis.clearTimeout(timer as ReturnType<typeof globalThis.setTimeout>),
};
