// The P2P engine players use when their options name none. The package entries register Shoal
// here; keeping the slot separate lets the player core build and test without any engine.
import type { P2pEngineFactory } from './options.js';

let defaultFactory: P2pEngineFactory | undefined;

export function setDefaultEngineFactory(factory: P2pEngineFactory | undefined): void {
  defaultFactory = factory;
}

export function defaultEngineFactory(): P2pEngineFactory | undefined {
  return defaultFactory;
}
