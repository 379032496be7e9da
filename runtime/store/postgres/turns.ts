// Calls that take turns by key: while a run for a key is going, the calls that arrive for that key
// wait, and are then run together by one run. The PostgreSQL store leases (one key per route and
// target) and settles leases (one key per statement and parameters) this way: one statement for
// many callers instead of several side by side on the same rows (leases.ts).

export interface TurnRules<Call, Answer> {
  /** How many of the waiting calls, from the front, run together next (at least one). */
  groupSize(waiting: readonly Call[]): number;
  /** Runs a group; resolves with each call's answer, in the group's order. */
  run(key: string, group: readonly Call[]): Promise<Answer[]>;
  /** An answer for a call that no longer needs to run (its caller went away), or undefined to run it. */
  answerUnrun?(call: Call): Answer | undefined;
}

interface Waiting<Call, Answer> {
  call: Call;
  resolve: (answer: Answer) => void;
  reject: (error: unknown) => void;
}

export class Turns<Call, Answer> {
  private readonly waiting = new Map<string, Waiting<Call, Answer>[]>();

  constructor(private readonly rules: TurnRules<Call, Answer>) {}

  /** Resolves with the call's answer once the run holding it has ended; a failed run rejects every call in it. */
  take(key: string, call: Call): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const queue = this.waiting.get(key);
      if (queue) return void queue.push({ call, resolve, reject });
      this.waiting.set(key, [{ call, resolve, reject }]);
      void this.runTurns(key);
    });
  }

  private async runTurns(key: string): Promise<void> {
    const queue = this.waiting.get(key)!;
    for (;;) {
      for (let i = queue.length - 1; i >= 0; i--) {
        const answer = this.rules.answerUnrun?.(queue[i].call);
        if (answer !== undefined) queue.splice(i, 1)[0].resolve(answer);
      }
      if (queue.length === 0) break;
      const group = queue.splice(0, Math.max(1, this.rules.groupSize(queue.map((w) => w.call))));
      try {
        const answers = await this.rules.run(key, group.map((w) => w.call));
        group.forEach((w, i) => w.resolve(answers[i]));
      } catch (error) {
        for (const w of group) w.reject(error);
      }
    }
    // No await since the queue was seen empty: a call arriving now starts a new run.
    this.waiting.delete(key);
  }
}
