import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// One config for every package's unit and integration tests (Node). Browser tests run under
// Playwright (playwright.config.ts). Packages resolve each other from source here, so a unit
// test never depends on a stale build.
const fromRoot = (path: string) => fileURLToPath(new URL(path, import.meta.url));
const alias = {
  '@shoal/core/webrtc': fromRoot('./packages/core/src/webrtc.ts'),
  '@shoal/core/testing': fromRoot('./packages/core/src/testing.ts'),
  '@shoal/core': fromRoot('./packages/core/src/index.ts'),
  '@shoal/hlsjs': fromRoot('./packages/hlsjs/src/index.ts'),
};
const project = (name: string, dir: string) => ({
  resolve: { alias },
  test: { name, include: [`${dir}/test/**/*.test.ts`], testTimeout: 30_000 },
});

export default defineConfig({
  test: {
    projects: [
      project('core', 'packages/core'),
      project('hlsjs', 'packages/hlsjs'),
      project('player', 'packages/player'),
      project('tracker', 'tracker'),
      project('e2e', 'e2e'),
    ],
  },
});
