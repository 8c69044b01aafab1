import { describe, expect, it } from 'vitest';
import { MAX_SLOTS, OFFER_TTL_MS, OfferBook } from '../src/offer-book.js';

const id = (n: number) => `o${String(n).padStart(19, '0')}`;

describe('OfferBook', () => {
  it('lets only the peer an offer was given to answer it, in the offerer\'s name, once', () => {
    const book = new OfferBook<string>();
    book.record(id(1), 'bob', 'alice', 0);
    expect(book.take(id(1), 'mallory', 'alice', 10)).toBe(false);
    expect(book.take(id(1), 'bob', 'carol', 10)).toBe(false);
    expect(book.take(id(2), 'bob', 'alice', 10)).toBe(false);
    // The refused answers did not use the offer up.
    expect(book.take(id(1), 'bob', 'alice', 10)).toBe(true);
    expect(book.take(id(1), 'bob', 'alice', 10)).toBe(false);
    expect(book.size).toBe(0);
  });

  it('refuses an answer after OFFER_TTL_MS', () => {
    const book = new OfferBook<string>();
    book.record(id(1), 'bob', 'alice', 0);
    book.record(id(2), 'bob', 'alice', 0);
    expect(book.take(id(1), 'bob', 'alice', OFFER_TTL_MS - 1)).toBe(true);
    expect(book.take(id(2), 'bob', 'alice', OFFER_TTL_MS)).toBe(false);
  });

  it('keeps the latest delivery of an offer_id used twice', () => {
    const book = new OfferBook<string>();
    book.record(id(1), 'bob', 'alice', 0);
    book.record(id(1), 'carol', 'alice', 1);
    expect(book.take(id(1), 'bob', 'alice', 2)).toBe(false);
    expect(book.take(id(1), 'carol', 'alice', 2)).toBe(true);
  });

  it('grows while its offers are young and unanswered, then overwrites the oldest at MAX_SLOTS', () => {
    const book = new OfferBook<number>();
    const first = book.capacity;
    // Answered offers free their slots: the ring stays as it is.
    for (let i = 0; i < first * 4; i++) {
      book.record(id(i), i, 'alice', i);
      expect(book.take(id(i), i, 'alice', i)).toBe(true);
    }
    expect(book.capacity).toBe(first);
    // Unanswered young ones make it grow, keeping every one of them answerable.
    for (let i = 0; i < first * 3; i++) book.record(id(i), i, 'alice', 0);
    expect(book.capacity).toBe(first * 4);
    for (let i = 0; i < first * 3; i += 97) expect(book.take(id(i), i, 'alice', 1)).toBe(true);
    // Expired ones are overwritten instead.
    const before = book.capacity;
    for (let i = 0; i < before * 2; i++) book.record(id(i), i, 'bob', OFFER_TTL_MS + i);
    expect(book.capacity).toBe(before * 2);
    // At the cap the oldest go first.
    for (let i = 0; i < MAX_SLOTS + 10; i++) book.record(id(i), i, 'carol', 2 * OFFER_TTL_MS);
    expect(book.capacity).toBe(MAX_SLOTS);
    expect(book.size).toBeLessThanOrEqual(MAX_SLOTS);
    expect(book.take(id(5), 5, 'carol', 2 * OFFER_TTL_MS)).toBe(false);
    expect(book.take(id(MAX_SLOTS + 5), MAX_SLOTS + 5, 'carol', 2 * OFFER_TTL_MS)).toBe(true);
  });
});
