// WebKit for the browser tests: WebKitGTK's MiniBrowser driven by WebKitWebDriver (Debian's
// webkit2gtk-driver) under Xvfb, over plain W3C WebDriver HTTP. Debian's WebKitGTK has Media Source
// Extensions and ManagedMediaSource (what iPhone Safari 17.1+ plays hls.js through) but no WebRTC.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { createServer } from 'node:net';

/** Debian's MiniBrowser by default; SHOAL_WEBKIT_BROWSER overrides. */
export function miniBrowserPath(): string {
  return process.env.SHOAL_WEBKIT_BROWSER ?? '/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser';
}

/** Where Debian's GStreamer plugins live (SHOAL_GST_PLUGIN_DIR overrides). */
const gstreamerPluginDir = process.env.SHOAL_GST_PLUGIN_DIR ?? '/usr/lib/x86_64-linux-gnu/gstreamer-1.0';

/**
 * Throws one sentence naming what is missing (WebKitWebDriver, MiniBrowser, xvfb-run, xauth, or
 * the GStreamer plugins WebKitGTK decodes H.264 and AAC with) and the Debian packages that bring it.
 */
export function assertWebKit(): void {
  const missing: string[] = [];
  const packages = new Set<string>();
  const need = (what: string, debianPackage: string) => {
    missing.push(what);
    packages.add(debianPackage);
  };
  const onPath = (command: string) => spawnSync('sh', ['-c', `command -v ${command}`]).status === 0;
  if (!onPath('WebKitWebDriver')) need('WebKitWebDriver', 'webkit2gtk-driver');
  try {
    accessSync(miniBrowserPath(), constants.X_OK);
  } catch {
    need(`MiniBrowser (${miniBrowserPath()}; SHOAL_WEBKIT_BROWSER overrides)`, 'webkit2gtk-driver');
  }
  if (!onPath('xvfb-run')) need('xvfb-run', 'xvfb');
  if (!onPath('xauth')) need('xauth', 'xauth');
  // Without these WebKitGTK's MSE supports no H.264 and hls.js gives up (manifestIncompatibleCodecsError).
  const plugin = (file: string) => existsSync(`${gstreamerPluginDir}/${file}`);
  if (existsSync(gstreamerPluginDir) && !plugin('libgstlibav.so')) need('the GStreamer H.264/AAC decoders', 'gstreamer1.0-libav');
  if (existsSync(gstreamerPluginDir) && !plugin('libgstvideoparsersbad.so')) need('the GStreamer H.264 parser', 'gstreamer1.0-plugins-bad');
  if (missing.length > 0) {
    throw new Error(`WebKit tests need ${missing.join(', ')}. Install them (Debian/Ubuntu: apt-get install -y --no-install-recommends ${[...packages].join(' ')}).`);
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** One MiniBrowser window under its own Xvfb, as a WebDriver session. */
export interface WebKitSession {
  goto(url: string): Promise<void>;
  /** Runs `script` (a function body; `return` gives the result) in the page. */
  evaluate<T>(script: string): Promise<T>;
  close(): Promise<void>;
}

/** Starts Xvfb, WebKitWebDriver and a MiniBrowser session; close() stops all three. */
export async function startWebKit(): Promise<WebKitSession> {
  assertWebKit();
  const port = await freePort();
  // A process group of its own: xvfb-run passes no signal on, so the group is what gets stopped.
  const driver: ChildProcess = spawn('xvfb-run', ['-a', 'WebKitWebDriver', `--port=${port}`], { detached: true, stdio: 'ignore' });
  const stopDriver = () => {
    try {
      process.kill(-driver.pid!, 'SIGTERM');
    } catch {
      // Already gone.
    }
  };
  const base = `http://127.0.0.1:${port}`;
  const call = async (method: string, path: string, body?: unknown, timeoutMs = 60_000) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const answer = (await response.json()) as { value: { error?: string; message?: string } & Record<string, unknown> };
    if (answer.value?.error) throw new Error(`WebKitWebDriver ${method} ${path}: ${answer.value.error}: ${answer.value.message}`);
    return answer.value;
  };
  try {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const ready = await call('GET', '/status', undefined, 2_000).then((status) => status.ready === true, () => false);
      if (ready) break;
      if (Date.now() > deadline) throw new Error(`WebKitWebDriver did not answer on port ${port} within 30 s`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const created = await call('POST', '/session', {
      capabilities: { alwaysMatch: { 'webkitgtk:browserOptions': { binary: miniBrowserPath(), args: ['--automation'] } } },
    });
    const session = `/session/${String(created.sessionId)}`;
    return {
      async goto(url) {
        await call('POST', `${session}/url`, { url });
      },
      async evaluate<T>(script: string) {
        return (await call('POST', `${session}/execute/sync`, { script, args: [] })) as T;
      },
      async close() {
        await call('DELETE', session, undefined, 10_000).catch(() => {});
        stopDriver();
      },
    };
  } catch (error) {
    stopDriver();
    throw error;
  }
}
