import { defineConfig } from '@playwright/test';
import { chromiumLaunchOptions } from './e2e/src/chromium.js';

// Browser tests: real Chromium (Debian's /usr/bin/chromium, override with SHOAL_CHROMIUM),
// real origin, real tracker. Run through `node scripts/netns.mjs` so WebRTC stays on loopback.
export default defineConfig({
  testDir: './e2e/browser-test',
  testMatch: '**/*.spec.ts',
  timeout: 180_000,
  fullyParallel: false,
  workers: 1,
  retries: 0,
  // A test.only left in a commit would silently skip the rest on CI.
  forbidOnly: !!process.env.CI,
  reporter: process.env.CI ? [['list']] : [['list']],
  use: {
    launchOptions: chromiumLaunchOptions(),
    permissions: ['camera', 'microphone'],
    trace: 'off',
  },
});
