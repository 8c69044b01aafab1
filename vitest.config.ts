import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// One config for every package's unit and integration tests (Node). Browser tests run under
// Playwright (playwright.config.ts). Packages resolve each other from source here, so a unit
// test never depends on a stale build.
const fromRoot = (path: string) => fileURLToPath(new URL(path, import.meta.url));
const alias = [
  { find: '@shoal/core/webrtc', replacement: fromRoot('./packages/core/src/webrtc.ts') },
  { find: '@shoal/core', replacement: fromRoot('./packages/core/src/index.ts') },
  { find: '@shoal/hlsjs', replacement: fromRoot('./packages/hlsjs/src/index.ts') },
  { find: '@shoal/sim/kit', replacement: fromRoot('./sim/src/kit.ts') },
  { find: '@shoal/tracker/swarm-registry', replacement: fromRoot('./tracker/src/swarm-registry.ts') },
  { find: /^@shoal\/e2e\/(.*)$/, replacement: fromRoot('./e2e/src/$1.ts') },
];
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
      project('sim', 'sim'),
      project('scripts', 'scripts'),
    ],
  },
});
