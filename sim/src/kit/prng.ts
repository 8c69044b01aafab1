// A seeded pseudo-random generator (mulberry32): the same seed gives the same simulation, event
// for event. Every random choice of the simulator draws from one of these, never Math.random.

export class Prng {
  private state: number;

  constructor(seed: number) {
    this.state = (Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ 0x5bd1e995) >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 0x1_0000_0000;
  }

  /** Uniform in [min, max). */
  between(min: number, max: number): number {
    return min + (max - min) * this.next();
  }

  /** Integer in [0, n). */
  index(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** Exponentially distributed with the given mean. */
  exponential(mean: number): number {
    return -Math.log(1 - this.next()) * mean;
  }

  /** 40 hex characters: a tracker peer id. */
  peerId(): string {
    let id = '';
    for (let i = 0; i < 5; i++) id += Math.floor(this.next() * 0x1_0000_0000).toString(16).padStart(8, '0');
    return id;
  }

  /** A new generator whose sequence depends only on this one's seed and `label`: streams that don't disturb each other. */
  fork(label: number): Prng {
    return new Prng((Math.floor(this.next() * 0x1_0000_0000) ^ Math.imul(label + 1, 0x27d4eb2d)) >>> 0);
  }
}
