import type { KubernetesObject } from '@kubernetes/client-node';
import pino from 'pino';
import { expect, test } from 'vitest';
import type { Controller, Reconciled, ReconcileResult } from '../../../src/operator/runtime/controller.ts';
import { done, failed, requeueAfter } from '../../../src/operator/runtime/controller.ts';
import type { CachedInformer } from '../../../src/operator/runtime/informers.ts';
import { Manager } from '../../../src/operator/runtime/manager.ts';
import { objectKey } from '../../../src/operator/runtime/object-key.ts';
import { ManualClock } from '../../support/manual-clock.ts';

/** An informer holding fixed objects (no watch): the manager reads the cache and registers handlers. */
function fixedInformer(objects: Reconciled[]): CachedInformer<Reconciled> {
  return {
    list: () => objects,
    get: (name: string, namespace?: string) => objects.find((object) => object.metadata.name === name && object.metadata.namespace === namespace),
    on: () => {},
  } as unknown as CachedInformer<Reconciled>;
}

function harness(outcomes: (ReconcileResult | Error)[]) {
  const resource = { apiVersion: 'coffer.dev/v1alpha1', kind: 'Integration', metadata: { name: 'web', namespace: 'shop', generation: 1 } } as Reconciled;
  const statusWrites: unknown[] = [];
  const events: string[] = [];
  const counted: string[] = [];
  const runs: number[] = [];
  const clock = new ManualClock();
  const controller: Controller = {
    kind: 'Integration',
    failureConditions: ['Ready', 'Synced'],
    informer: fixedInformer([resource]),
    setup: () => {},
    reconcile: async () => {
      runs.push(clock.now());
      const outcome = outcomes.shift() ?? done();
      if (outcome instanceof Error) throw outcome;
      return outcome;
    },
    finalize: async () => {},
  };
  const manager = new Manager({
    logger: pino({ level: 'silent' }),
    concurrency: 1,
    clock,
    random: () => 0, // the least jitter: half of each backoff's ceiling
    status: {
      // as the informer would show it after the write
      write: async (_kind, written, fields, conditions) => {
        statusWrites.push({ fields, conditions });
        written.status = { ...written.status, conditions: conditions.map((condition) => ({ ...condition, lastTransitionTime: '' })) };
      },
      condition: (_kind, resource, type) => resource.status?.conditions?.find((condition) => condition.type === type),
      observe: () => {},
      forget: () => {},
      // the finalizer's writes are the cluster tier's (test/cluster/reconcile-preamble.test.ts)
      ensureFinalizer: async () => {},
      removeFinalizer: async () => {},
    },
    events: { record: (_object: KubernetesObject, type, reason, message) => events.push(`${type} ${reason}: ${message}`) },
    metrics: {
      reconciled: (kind, outcome) => counted.push(`${kind} ${outcome}`),
      failed: (kind, reason) => counted.push(`${kind} failed ${reason}`),
      forgetResource: () => {},
      observeQueue: () => {},
    },
  });
  manager.add(controller);
  manager.start();
  return { manager, clock, statusWrites, events, counted, runs, key: objectKey('Integration', resource.metadata) };
}

test('a failed reconcile goes through the one failure path: its conditions False with the reason, one Warning Event, an error counted', async () => {
  const { manager, statusWrites, events, counted, key } = harness([failed({ reason: 'SecretTooLarge', message: 'the Secret would exceed 1 MiB', retry: 'on-change' })]);
  manager.enqueue(key);
  await manager.idle();
  expect(statusWrites).toEqual([
    {
      fields: {},
      conditions: [
        { type: 'Ready', status: 'False', reason: 'SecretTooLarge', message: 'the Secret would exceed 1 MiB' },
        { type: 'Synced', status: 'False', reason: 'SecretTooLarge', message: 'the Secret would exceed 1 MiB' },
      ],
    },
  ]);
  expect(events).toEqual(['Warning SecretTooLarge: the Secret would exceed 1 MiB']);
  expect(counted).toEqual(['Integration failed SecretTooLarge', 'Integration error']);
  await manager.stop();
});

test('done is counted ok and not run again; requeue-after runs again after the delay without the failure path', async () => {
  const { manager, clock, statusWrites, counted, runs, key } = harness([requeueAfter(30), done()]);
  manager.enqueue(key);
  await manager.idle();
  expect(clock.pending).toEqual([30]);
  clock.advance(30);
  await manager.idle();
  expect(runs).toEqual([0, 30]);
  expect(clock.pending).toEqual([]);
  expect(counted).toEqual(['Integration requeue', 'Integration ok']);
  expect(statusWrites).toEqual([]);
  await manager.stop();
});

test('a failure with retry backoff runs again with growing delays, its Event posted once while it stands; a thrown error is counted and retried the same way', async () => {
  const failure = failed({ reason: 'SecretRefused', message: 'no', retry: 'backoff' });
  const { manager, clock, counted, runs, key, statusWrites, events } = harness([failure, new Error('the apiserver is away'), failure]);
  manager.enqueue(key);
  for (let retry = 0; retry < 3; retry++) {
    await manager.idle();
    clock.advance(clock.pending[0]!);
  }
  await manager.idle();
  // from 200 ms, doubling per consecutive failure (the thrown error counts as one)
  expect(runs).toEqual([0, 100, 300, 700]);
  expect(clock.pending).toEqual([]);
  expect(counted.filter((entry) => !entry.includes(' failed '))).toEqual(['Integration error', 'Integration error', 'Integration error', 'Integration ok']);
  expect(counted.filter((entry) => entry.includes(' failed '))).toEqual([
    'Integration failed SecretRefused',
    'Integration failed Error',
    'Integration failed SecretRefused',
  ]);
  // the thrown error did not go through the failure path (no condition says what is unknown)
  expect(statusWrites).toHaveLength(2);
  expect(events).toEqual(['Warning SecretRefused: no']);
  await manager.stop();
});
