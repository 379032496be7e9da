// The memory store's ordered structures: a binary min-heap (lease expiries) and the run queue built
// on it (ready messages). Both take lazy deletion (entries carry the version they were pushed at),
// so dequeue stays O(log n) at 1M queued, and O(1) for messages appended in order.
export class Heap<T> {
  private readonly items: T[] = [];

  constructor(private readonly less: (a: T, b: T) => boolean) {}

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    const items = this.items;
    items.push(item);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(items[i], items[parent])) break;
      [items[i], items[parent]] = [items[parent], items[i]];
      i = parent;
    }
  }

  pop(): T | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last !== undefined) {
      items[0] = last;
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        const right = left + 1;
        let smallest = i;
        if (left < items.length && this.less(items[left], items[smallest])) smallest = left;
        if (right < items.length && this.less(items[right], items[smallest])) smallest = right;
        if (smallest === i) break;
        [items[i], items[smallest]] = [items[smallest], items[i]];
        i = smallest;
      }
    }
    return top;
  }
}

/**
 * A min-queue for ready messages: a FIFO run for entries pushed in order (the usual case: ingress
 * appends messages ready now, each no earlier than the last) beside a heap for the rest (delays,
 * nacks, lease expiries, explicit received_at). Popping the FIFO reads memory in order; a binary
 * heap of 1M entries chases a pointer to a cold cache line at each of its 20 levels, which made
 * dequeue at 1M queued several times slower than at 10k.
 */
export class RunQueue<T> {
  private run: T[] = [];
  private head = 0;
  private readonly heap: Heap<T>;

  constructor(private readonly less: (a: T, b: T) => boolean) {
    this.heap = new Heap(less);
  }

  get size(): number {
    return this.run.length - this.head + this.heap.size;
  }

  peek(): T | undefined {
    const first = this.head < this.run.length ? this.run[this.head] : undefined;
    const top = this.heap.peek();
    if (first === undefined) return top;
    if (top === undefined) return first;
    return this.less(top, first) ? top : first;
  }

  push(item: T): void {
    const last = this.head < this.run.length ? this.run[this.run.length - 1] : undefined;
    if (last === undefined || !this.less(item, last)) this.run.push(item);
    else this.heap.push(item);
  }

  pop(): T | undefined {
    const first = this.head < this.run.length ? this.run[this.head] : undefined;
    const top = this.heap.peek();
    if (first === undefined || (top !== undefined && this.less(top, first))) return this.heap.pop();
    this.run[this.head] = undefined as T;
    this.head++;
    // Drop the consumed prefix once it is most of the array, so memory follows the backlog.
    if (this.head === this.run.length) {
      this.run = [];
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= this.run.length) {
      this.run = this.run.slice(this.head);
      this.head = 0;
    }
    return first;
  }
}
