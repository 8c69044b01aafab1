// The tracker's listening sockets: its port (replaced on a certificate reload without a moment
// in which the port refuses connections) and the separate stats port, each claimed for this
// process alone unless this is a worker thread, whose process has claimed them already.

import type { TemplatedApp, us_listen_socket } from '@trufflesuite/uws-js-unofficial';
import { ConfigError } from './config.js';
import { findFreePort } from './free-port.js';
import { assertSoleListener, claimPorts, type PortAddress, type PortClaim } from './port-claim.js';
import { createMetricsApp, createTrackerApp, type AppContext } from './tracker-app.js';
import type { Uws } from './uws-loader.js';

export class TrackerListeners {
  private constructor(
    private readonly uws: Uws,
    private readonly address: PortAddress,
    private trackerSocket: us_listen_socket,
    private readonly metricsSocket: us_listen_socket | null,
    readonly metricsUrl: string | null,
    private readonly claim: PortClaim | null,
  ) {}

  /** `sole`: claim the ports (no other process may listen on them); false in a worker thread. */
  static async open(context: AppContext, sole: boolean): Promise<TrackerListeners> {
    const { options, uws } = context;
    const addresses: PortAddress[] = [{ setting: 'port', host: options.host, port: options.port === 0 ? await findFreePort(options.host) : options.port }];
    if (options.metricsHost !== null && options.metricsPort !== null) {
      const metricsPort = options.metricsPort === 0 ? await findFreePort(options.metricsHost) : options.metricsPort;
      addresses.push({ setting: 'metricsPort', host: options.metricsHost, port: metricsPort });
    }
    const claim = sole ? await claimPorts(addresses) : null;
    try {
      const [tracker, metrics] = addresses;
      const trackerSocket = await listen(createTrackerApp(context), tracker!);
      const metricsSocket = metrics ? await listen(createMetricsApp(context), metrics).catch(closing(uws, trackerSocket)) : null;
      const metricsUrl = metrics ? `http://${hostForUrl(metrics.host)}:${metrics.port}` : null;
      const listeners = new TrackerListeners(uws, tracker!, trackerSocket, metricsSocket, metricsUrl, claim);
      try {
        if (sole) assertSoleListener(addresses);
      } catch (error) {
        listeners.close();
        throw error;
      }
      return listeners;
    } catch (error) {
      claim?.release();
      throw error;
    }
  }

  get port(): number {
    return this.address.port;
  }

  url(tls: boolean): string {
    return `${tls ? 'wss' : 'ws'}://${hostForUrl(this.address.host)}:${this.address.port}`;
  }

  /**
   * Serves new connections from `app`: it listens on the same port (SO_REUSEPORT) before the
   * old listener closes, so no connection attempt is refused; open sockets stay on the old app.
   */
  async replaceTrackerApp(app: TemplatedApp): Promise<void> {
    const next = await listen(app, this.address);
    this.uws.us_listen_socket_close(this.trackerSocket);
    this.trackerSocket = next;
  }

  close(): void {
    this.uws.us_listen_socket_close(this.trackerSocket);
    if (this.metricsSocket) this.uws.us_listen_socket_close(this.metricsSocket);
    this.claim?.release();
  }
}

function closing(uws: Uws, socket: us_listen_socket): (error: unknown) => never {
  return (error) => {
    uws.us_listen_socket_close(socket);
    throw error;
  };
}

function listen(app: TemplatedApp, { setting, host, port }: PortAddress): Promise<us_listen_socket> {
  return new Promise((resolve, reject) => {
    app.listen(host, port, (socket) => {
      if (socket) resolve(socket);
      else reject(new ConfigError(`\`${setting}\`: cannot listen on ${host}:${port} (address in use, or not permitted)`));
    });
  });
}

/** 0.0.0.0 and :: are shown as 127.0.0.1; IPv6 addresses get brackets. */
function hostForUrl(host: string): string {
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return shown.includes(':') ? `[${shown}]` : shown;
}
