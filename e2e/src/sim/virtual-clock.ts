// The engine's Clock on virtual time, and the loop that advances it. Each instant's events run,
// then every promise continuation they started is drained before time moves on, so async code
// (the engine's `await`s, HTTP body promises) sees the same clock reading it would in a browser.
import type { Clock, TimerId } from '@shoal/core';
import { EventQueue, type SimEvent } from './event-queue.js';

const drainMicrotasks = () => new Promise<void>((resolve) => setImmediate(resolve));

export class VirtualClock implements Clock {
  private readonly queue = new EventQueue();
  private nowMs: number;
  /** Events run so far (cancelled ones excluded). */
  eventsRun = 0;

  constructor(startMs = 0) {
    this.nowMs = startMs;
  }

  now(): number {
    return this.nowMs;
  }

  setTimeout(callback: () => void, delayMs: number): TimerId {
    const delay = Number.isFinite(delayMs) && delayMs > 0 ? delayMs : 0;
    return this.queue.push(this.nowMs + delay, callback);
  }

  clearTimeout(timer: TimerId): void {
    if (timer && typeof timer === 'object' && 'callback' in timer) (timer as SimEvent).callback = null;
  }

  /** Schedules at an absolute virtual time (never in the past). */
  at(atMs: number, callback: () => void): SimEvent {
    return this.queue.push(Math.max(atMs, this.nowMs), callback);
  }

  /** Events waiting, including cancelled ones not yet discarded. */
  get pending(): number {
    return this.queue.size;
  }

  /**
   * Runs every event up to and including `endMs`, then sets the clock to `endMs`. An exception
   * thrown by an event stops the run and is rethrown: a simulator bug or an engine crash must not
   * be averaged into a report.
   */
  async runUntil(endMs: number): Promise<void> {
    await drainMicrotasks();
    for (;;) {
      const next = this.queue.peek();
      if (!next || next.atMs > endMs) break;
      const instant = next.atMs;
      this.nowMs = instant;
      for (;;) {
        const event = this.queue.peek();
        if (!event || event.atMs !== instant) break;
        this.queue.pop();
        const callback = event.callback!;
        event.callback = null;
        this.eventsRun++;
        callback();
      }
      await drainMicrotasks();
    }
    if (endMs > this.nowMs) this.nowMs = endMs;
    await drainMicrotasks();
  }
}
