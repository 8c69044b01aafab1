// A shaped run's readings of its viewers' uplinks by class: the counters installed in each
// viewer's namespace as it is made, and at each sample every present viewer's kernel counts read
// right after its page's snapshot (the engine counts bytes as it hands them to its channel, the
// kernel as they leave: read in this order, the kernel is not the one behind).
import { installUplinkCounters, readUplinkCounters, type UplinkDestinations } from './uplink-counters.js';
import type { UplinkClassesRecord, UplinkPoint, ViewerUplinkRecord } from './uplink-classes.js';
import type { ViewerSnapshot } from './viewer-snapshot.js';

export class UplinkLedger {
  private readonly viewers = new Map<number, ViewerUplinkRecord & { namespace: string }>();
  private fromS: number | null = null;
  /** Why the counters could not be installed (no iptables, say); null while they work. */
  failure: string | null = null;

  constructor(private readonly destinations: UplinkDestinations) {}

  /** Counts viewer `index`'s uplink from now on; a failure is kept for the report's notes, the run goes on. */
  async add(index: number, namespace: string): Promise<void> {
    if (this.failure) return;
    try {
      await installUplinkCounters(namespace, this.destinations);
      this.viewers.set(index, { id: `v${index}`, namespace, atJoins: null, last: null, paceSamples: [], advertisedSamples: [] });
    } catch (error) {
      this.failure = `the uplink's classes were not counted: iptables in the viewer's namespace failed (${(error as Error).message.split('\n')[0]})`;
    }
  }

  /**
   * Reads the viewers still present, each with the snapshot its page just gave; `afterJoins`: the
   * joins are over (the first such reading starts the period after them).
   */
  async read(present: ReadonlyArray<{ index: number; snapshot: ViewerSnapshot | null }>, tS: number, afterJoins: boolean): Promise<void> {
    if (afterJoins && this.fromS === null) this.fromS = tS;
    await Promise.all(
      present.map(async ({ index, snapshot }) => {
        const viewer = this.viewers.get(index);
        if (!viewer || !snapshot) return;
        const kernel = await readUplinkCounters(viewer.namespace);
        if (!kernel) return;
        const countsControl = snapshot.engine === 'http' || !snapshot.p2p;
        const point: UplinkPoint = {
          tS,
          kernel,
          uploadBytes: snapshot.uploadedBytes,
          controlBytes: snapshot.controlBytes ?? (countsControl ? 0 : null),
          timerLag: snapshot.timerLag ?? null,
        };
        viewer.last = point;
        if (this.fromS === null) return;
        // A viewer that joined after the period began has no reading at its start.
        if (this.fromS === tS) viewer.atJoins = point;
        if (viewer.atJoins && typeof snapshot.uploadPaceBytesPerS === 'number') viewer.paceSamples.push(snapshot.uploadPaceBytesPerS);
        if (viewer.atJoins && typeof snapshot.uploadAdvertisedBytesPerS === 'number') viewer.advertisedSamples?.push(snapshot.uploadAdvertisedBytesPerS);
      }),
    );
  }

  record(): UplinkClassesRecord {
    return { fromS: this.fromS, viewers: [...this.viewers.values()].map(({ namespace: _namespace, ...viewer }) => viewer) };
  }
}
