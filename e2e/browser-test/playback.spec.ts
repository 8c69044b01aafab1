import { expect, test } from '@playwright/test';
import { startDemoStack, type DemoStack } from '../src/demo-stack.js';
import { waitForPlaybackAdvance } from '../src/page-probes.js';

let stack: DemoStack;
test.beforeAll(async () => {
  stack = await startDemoStack();
});
test.afterAll(async () => {
  await stack?.close();
});

for (const stream of ['live', 'vod'] as const) {
  test(`the demo's ${stream} page plays with hls.js alone`, async ({ page }) => {
    await page.goto(`${stack.urls[stream]}&p2p=0`);
    const { advancedS } = await waitForPlaybackAdvance(page, 5);
    expect(advancedS).toBeGreaterThanOrEqual(5);
    const errors = await page.evaluate(() => (window as unknown as { shoalDemo: { errors: Array<{ fatal: boolean }> } }).shoalDemo.errors);
    expect(errors.filter((error) => error.fatal)).toEqual([]);
    expect(stack.origin.stats().segments.bytes).toBeGreaterThan(0);
  });
}
