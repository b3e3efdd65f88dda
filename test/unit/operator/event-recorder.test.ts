import { describe, expect, test } from 'vitest';
import { EventRecorder, type PendingEvent } from '../../../src/operator/runtime/event-recorder.ts';

describe('event recorder', () => {
  const object = (name: string) => ({ apiVersion: 'coffer.dev/v1alpha1', kind: 'Integration', metadata: { name, namespace: 'ns', uid: `uid-${name}` } });

  /** A recorder whose posts wait until released, recording what was posted and what was dropped. */
  function gated(capacity: number) {
    const posted: string[] = [];
    const dropped: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const recorder = new EventRecorder({
      capacity,
      concurrency: 1,
      send: async (event: PendingEvent) => {
        await gate;
        if (event.reason === 'SecretRefused') throw new Error('forbidden');
        posted.push(`${event.type} ${event.object.metadata!.name} ${event.reason}`);
      },
      onDropped: (type, cause) => dropped.push(`${type} ${cause}`),
    });
    return { recorder, posted, dropped, release };
  }

  test('record() returns at once; beyond capacity Normal events are dropped and counted, Warnings go first', async () => {
    const { recorder, posted, dropped, release } = gated(2);
    recorder.record(object('a'), 'Normal', 'Synced', 'first'); // posting (waits on the gate)
    recorder.record(object('b'), 'Normal', 'Synced', 'waits');
    recorder.record(object('c'), 'Normal', 'Synced', 'waits');
    recorder.record(object('d'), 'Normal', 'Synced', 'queue full'); // dropped
    recorder.record(object('e'), 'Warning', 'Rejected', 'takes the place of b');
    expect(dropped).toEqual(['Normal queue-full', 'Normal queue-full']);
    release();
    await recorder.idle();
    expect(posted).toEqual(['Normal a Synced', 'Warning e Rejected', 'Normal c Synced']);
  });

  test('an event identical to one still waiting is queued once; a failed post is counted', async () => {
    const { recorder, posted, dropped, release } = gated(10);
    recorder.record(object('a'), 'Normal', 'Synced', 'first');
    recorder.record(object('b'), 'Warning', 'Rejected', 'same');
    recorder.record(object('b'), 'Warning', 'Rejected', 'same');
    recorder.record(object('b'), 'Warning', 'SecretRefused', 'apiserver says no');
    release();
    await recorder.idle();
    expect(posted).toEqual(['Normal a Synced', 'Warning b Rejected']);
    expect(dropped).toEqual(['Warning failed']);
  });
});

describe('event recorder rate', () => {
  test('posts at most `burst` events at once, the rest as tokens come back, none lost below capacity', async () => {
    const posted: string[] = [];
    const recorder = new EventRecorder({
      capacity: 100,
      concurrency: 10,
      rate: { perSecond: 50, burst: 3 },
      send: async (event: PendingEvent) => void posted.push(event.object.metadata!.name!),
    });
    const names = Array.from({ length: 8 }, (_, index) => `event-${index}`);
    for (const name of names) recorder.record({ apiVersion: 'v1', kind: 'Integration', metadata: { name, namespace: 'ns', uid: name } }, 'Normal', 'Synced', 'ok');
    await Promise.resolve();
    expect(posted).toEqual(names.slice(0, 3));
    expect(recorder.length).toBe(5);
    await recorder.idle();
    expect(posted).toEqual(names);
  });
});
