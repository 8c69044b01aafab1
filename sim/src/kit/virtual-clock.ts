// The engine's Clock on virtual time, and the loop that advances it: the one clock of core's tests
// and of the simulator. Each instant's events run, then every promise continuation they started
// is drained before time moves on, so async code (the engine's `await`s, HTTP body promises) sees
// the same clock reading it would in a browser. Node only (process.nextTick, setImmediate).
import type { Clock, TimerId } from '@shoal/core';
import { EventQueue, type SimEvent } from './event-queue.js';

const { setImmediate, process: nodeProcess } = globalThis as unknown as {
  setImmediate: (callback: () => void) => unknown;
  process: { nextTick: (callback: () => void) => void };
};
/**
 * Calls `callback` once every promise continuation queued so far, and every one those queue in
 * turn, has run. A microtask queued now runs after the ones already queued; the tick it schedules
 * runs only when Node has emptied the microtask queue (process.nextTick's queue is served between
 * full drains). The same guarantee as a setImmediate, without a turn of the event loop and the
 * promise an `await` on it costs: most instants carry a handful of events, so this is most of the
 * clock's own cost.
 */
const afterMicrotasks = (callback: () => void) => queueMicrotask(() => nodeProcess.nextTick(callback));
/** Instants run between two turns of the event loop (real I/O and timers of the test runner). */
const INSTANTS_PER_TURN = 1024;
/**
 * Events at one instant past which the loop is taken for a livelock (a timer that calls itself
 * back at the same instant would otherwise spin synchronously, and hang a test run for good). A
 * 1,000-viewer simulation runs a few thousand at its busiest instants.
 */
const MAX_EVENTS_PER_INSTANT = 1_000_000;

export class VirtualClock implements Clock {
  private readonly queue = new EventQueue();
  private nowMs: number;
  /** Events run so far (cancelled ones excluded). */
  eventsRun = 0;
  /** Events scheduled and neither run nor cancelled yet. */
  pending = 0;

  constructor(startMs = 0) {
    this.nowMs = startMs;
  }

  now(): number {
    return this.nowMs;
  }

  setTimeout(callback: () => void, delayMs: number): TimerId {
    // Like a browser's setTimeout, a delay that is not a positive finite number means now.
    const delay = Number.isFinite(delayMs) && delayMs > 0 ? delayMs : 0;
    return this.at(this.nowMs + delay, callback);
  }

  clearTimeout(timer: TimerId): void {
    if (!timer || typeof timer !== 'object' || !('callback' in timer)) return;
    const event = timer as SimEvent;
    if (event.callback === null) return;
    event.callback = null;
    this.pending--;
  }

  /** Schedules at an absolute virtual time (never in the past). */
  at(atMs: number, callback: () => void): SimEvent {
    this.pending++;
    return this.queue.push(Math.max(atMs, this.nowMs), callback);
  }

  /** Runs every event due within the next `ms` (see runUntil). */
  advance(ms: number): Promise<void> {
    return this.runUntil(this.nowMs + ms);
  }

  /**
   * Runs every event up to and including `endMs`, then sets the clock to `endMs`. An exception
   * thrown by an event stops the run and is rethrown: a simulator bug or an engine crash must not
   * be averaged into a report. So does a livelock (MAX_EVENTS_PER_INSTANT).
   */
  runUntil(endMs: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let instants = 0;
      const step = () => {
        try {
          const next = this.queue.peek();
          if (!next || next.atMs > endMs) {
            if (endMs > this.nowMs) this.nowMs = endMs;
            afterMicrotasks(resolve);
            return;
          }
          this.runInstant(next.atMs);
        } catch (error) {
          reject(error);
          return;
        }
        if (++instants % INSTANTS_PER_TURN === 0) setImmediate(step);
        else afterMicrotasks(step);
      };
      afterMicrotasks(step);
    });
  }

  /** Runs every event due at `instant` (the earliest pending), in order. */
  private runInstant(instant: number): void {
    this.nowMs = instant;
    const queue = this.queue;
    for (let count = 0; ; count++) {
      const event = queue.peek();
      if (!event || event.atMs !== instant) break;
      if (count === MAX_EVENTS_PER_INSTANT) {
        throw new Error(`virtual clock: over ${MAX_EVENTS_PER_INSTANT} events at ${instant} ms: something calls itself back without letting time move`);
      }
      queue.pop();
      const callback = event.callback!;
      event.callback = null;
      this.pending--;
      this.eventsRun++;
      callback();
    }
  }
}
