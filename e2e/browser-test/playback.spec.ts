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
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.goto(`${stack.urls[stream]}&p2p=0`);
    const { advancedS } = await waitForPlaybackAdvance(page, 5);
    expect(advancedS).toBeGreaterThanOrEqual(5);
    // The page shows a fatal hls.js error in its status line.
    await expect(page.locator('#status')).not.toContainText('fatal');
    expect(pageErrors).toEqual([]);
    expect(stack.origin.stats().segments.bytes).toBeGreaterThan(0);
  });
}
