// The offers this node handed to its own sockets, so that an answer is relayed only for one of
// them: from the peer the offer went to, back to the peer that made it (aquatic_ws's rule). An
// answer with an offer_id its sender never received, or in another peer's name, goes nowhere.
//
// Bounded, O(1) per offer and per answer: a ring of the latest offers in delivery order plus a
// map offer_id -> slot. The ring doubles (up to MAX_SLOTS) only when the entry it would
// overwrite is unanswered and younger than OFFER_TTL_MS, so it holds about TTL x the rate of
// unanswered offers; past MAX_SLOTS the oldest go first. An answer uses its offer up. No timers:
// an expired entry is refused on sight and overwritten in turn.

/** bittorrent-tracker's client gives up on an offer after 50 s, Shoal's after 15 s. */
export const OFFER_TTL_MS = 50_000;
const FIRST_SLOTS = 1024;
/** 2^18 offers: about 8 MB of slots at most, plus the ids they hold. */
export const MAX_SLOTS = 1 << 18;

export class OfferBook<Peer> {
  private offerIds: (string | undefined)[] = new Array<string | undefined>(FIRST_SLOTS);
  private targets: (Peer | undefined)[] = new Array<Peer | undefined>(FIRST_SLOTS);
  private offererIds: (string | undefined)[] = new Array<string | undefined>(FIRST_SLOTS);
  private atMs = new Float64Array(FIRST_SLOTS);
  private readonly slots = new Map<string, number>();
  /** The slot the next offer takes: the oldest entry. */
  private next = 0;

  /** Offers delivered and neither answered nor overwritten (some may have expired). */
  get size(): number {
    return this.slots.size;
  }

  get capacity(): number {
    return this.offerIds.length;
  }

  /** The tracker gave offer `offerId` of peer `offererId` to `target`. */
  record(offerId: string, target: Peer, offererId: string, nowMs: number): void {
    let slot = this.next;
    const previous = this.offerIds[slot];
    if (previous !== undefined) {
      if (this.atMs[slot]! > nowMs - OFFER_TTL_MS && this.offerIds.length < MAX_SLOTS) {
        this.grow();
        slot = this.next;
      } else if (this.slots.get(previous) === slot) {
        this.slots.delete(previous);
      }
    }
    this.offerIds[slot] = offerId;
    this.targets[slot] = target;
    this.offererIds[slot] = offererId;
    this.atMs[slot] = nowMs;
    this.slots.set(offerId, slot);
    this.next = (slot + 1) & (this.offerIds.length - 1);
  }

  /**
   * True (and the offer is used up) when the tracker gave offer `offerId` of peer `offererId` to
   * `answerer` within OFFER_TTL_MS; false leaves the book as it was.
   */
  take(offerId: string, answerer: Peer, offererId: string, nowMs: number): boolean {
    const slot = this.slots.get(offerId);
    if (slot === undefined || this.targets[slot] !== answerer || this.offererIds[slot] !== offererId || this.atMs[slot]! <= nowMs - OFFER_TTL_MS) return false;
    this.slots.delete(offerId);
    this.clear(slot);
    return true;
  }

  private clear(slot: number): void {
    this.offerIds[slot] = undefined;
    this.targets[slot] = undefined;
    this.offererIds[slot] = undefined;
  }

  /** Twice the slots, the entries kept oldest first from slot 0; `next` is then the first new slot. */
  private grow(): void {
    const old = this.offerIds.length;
    const size = old * 2;
    const offerIds = new Array<string | undefined>(size);
    const targets = new Array<Peer | undefined>(size);
    const offererIds = new Array<string | undefined>(size);
    const atMs = new Float64Array(size);
    for (let i = 0; i < old; i++) {
      const from = (this.next + i) & (old - 1);
      const offerId = this.offerIds[from];
      if (offerId === undefined) continue;
      offerIds[i] = offerId;
      targets[i] = this.targets[from];
      offererIds[i] = this.offererIds[from];
      atMs[i] = this.atMs[from]!;
      if (this.slots.get(offerId) === from) this.slots.set(offerId, i);
    }
    this.offerIds = offerIds;
    this.targets = targets;
    this.offererIds = offererIds;
    this.atMs = atMs;
    this.next = old;
  }
}
