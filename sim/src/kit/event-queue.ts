// The simulator's agenda: a binary min-heap of events ordered by time, then by insertion order,
// so events at the same instant run in the order they were scheduled (deterministic).

export interface SimEvent {
  atMs: number;
  order: number;
  /** Null once cancelled: the entry stays in the heap and is skipped when it comes up. */
  callback: (() => void) | null;
}

export class EventQueue {
  private readonly heap: SimEvent[] = [];
  private nextOrder = 0;

  get size(): number {
    return this.heap.length;
  }

  push(atMs: number, callback: () => void): SimEvent {
    const event: SimEvent = { atMs, order: this.nextOrder++, callback };
    const heap = this.heap;
    let index = heap.length;
    heap.push(event);
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      const parent = heap[parentIndex]!;
      if (!before(event, parent)) break;
      heap[index] = parent;
      index = parentIndex;
    }
    heap[index] = event;
    return event;
  }

  /** The earliest live event, without removing it; cancelled entries on top are discarded. */
  peek(): SimEvent | undefined {
    const heap = this.heap;
    while (heap.length > 0 && heap[0]!.callback === null) this.pop();
    return heap[0];
  }

  pop(): SimEvent | undefined {
    const heap = this.heap;
    const top = heap[0];
    const last = heap.pop();
    if (top === undefined || last === undefined || heap.length === 0) return top;
    const length = heap.length;
    let index = 0;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= length) break;
      const right = left + 1;
      const child = right < length && before(heap[right]!, heap[left]!) ? right : left;
      if (!before(heap[child]!, last)) break;
      heap[index] = heap[child]!;
      index = child;
    }
    heap[index] = last;
    return top;
  }
}

function before(a: SimEvent, b: SimEvent): boolean {
  return a.atMs < b.atMs || (a.atMs === b.atMs && a.order < b.order);
}
