import { describe, expect, test } from 'vitest';
import { WorkQueue } from '../../../src/operator/runtime/work-queue.ts';

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
    await new Promise((resolve) => setTimeout(resolve, 20));
    await queue.idle();
    expect(runs.sort()).toEqual(['a', 'a', 'b', 'c']);
    expect(peak).toBeLessThanOrEqual(2);
    await queue.stop();
  });

  test('failures retry with growing delays', async () => {
    const times: number[] = [];
    const queue = new WorkQueue<string>({
      concurrency: 1,
      identify: (key) => key,
      baseDelayMs: 20,
      handler: async () => {
        times.push(Date.now());
        if (times.length < 4) throw new Error('not yet');
        return undefined;
      },
    });
    queue.start();
    queue.add('k');
    while (times.length < 4) await new Promise((resolve) => setTimeout(resolve, 10));
    const gaps = times.slice(1).map((time, index) => time - times[index]!);
    expect(gaps[0]).toBeGreaterThanOrEqual(10);
    expect(gaps[2]).toBeGreaterThanOrEqual(40);
    await queue.stop();
  });
});
