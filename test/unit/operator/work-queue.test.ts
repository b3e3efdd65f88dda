import { describe, expect, test } from 'vitest';
import { type Requeue, WorkQueue } from '../../../src/operator/runtime/work-queue.ts';
import { ManualClock } from '../../support/manual-clock.ts';

describe('work queue', () => {
  test('dedupes waiting keys, reruns a key added while it runs, bounds concurrency', async () => {
    const runs: string[] = [];
    let active = 0;
    let peak = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const queue = new WorkQueue<string>({
      concurrency: 2,
      identify: (key) => key,
      handler: async (key) => {
        active++;
        peak = Math.max(peak, active);
        runs.push(key);
        if (key === 'a' && runs.filter((run) => run === 'a').length === 1) await gate;
        active--;
        return undefined;
      },
    });
    queue.start();
    queue.add('a');
    queue.add('b');
    queue.add('c');
    queue.add('c');
    queue.add('a'); // while 'a' runs: once more afterwards
    release();
    await queue.idle();
    expect(runs.sort()).toEqual(['a', 'a', 'b', 'c']);
    expect(peak).toBeLessThanOrEqual(2);
    await queue.stop();
  });

  test('failures retry with delays doubling from baseDelayMs (jitter: between half and all of it), and a success forgets them', async () => {
    const clock = new ManualClock();
    let calls = 0;
    const queue = new WorkQueue<string>({
      concurrency: 1,
      identify: (key) => key,
      baseDelayMs: 20,
      clock,
      random: () => 0, // the least jitter: half the ceiling
      handler: async () => {
        calls++;
        if (calls < 4) throw new Error('not yet');
        return undefined;
      },
    });
    queue.start();
    queue.add('k');
    const retries: number[][] = [];
    for (let attempt = 1; attempt < 4; attempt++) {
      await queue.idle();
      retries.push(clock.pending);
      clock.advance(clock.pending[0]!);
    }
    await queue.idle();
    expect(retries).toEqual([[10], [20], [40]]);
    expect(calls).toBe(4);
    expect(clock.pending).toEqual([]);
    await queue.stop();
  });

  test('a requeue after a delay is not a failure: nothing runs before it falls due, then the key runs once', async () => {
    const clock = new ManualClock();
    const outcomes: Requeue[] = [{ afterMs: 5_000 }, undefined];
    let calls = 0;
    const queue = new WorkQueue<string>({ concurrency: 1, identify: (key) => key, clock, handler: async () => (calls++, outcomes.shift()) });
    queue.start();
    queue.add('k');
    await queue.idle();
    expect(clock.pending).toEqual([5_000]);
    clock.advance(4_999);
    await queue.idle();
    expect(calls).toBe(1);
    clock.advance(1);
    await queue.idle();
    expect(calls).toBe(2);
    expect(clock.pending).toEqual([]);
    await queue.stop();
  });
});
