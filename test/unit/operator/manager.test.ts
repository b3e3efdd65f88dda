import type { KubernetesObject } from '@kubernetes/client-node';
import pino from 'pino';
import { expect, test } from 'vitest';
import { AppError } from '../../../src/errors.ts';
import { toFailure } from '../../../src/operator/controllers/failures.ts';
import type { Controller, Reconciled, ReconcileResult } from '../../../src/operator/runtime/controller.ts';
import { done, failed, requeueAfter } from '../../../src/operator/runtime/controller.ts';
import type { CachedInformer } from '../../../src/operator/runtime/informers.ts';
import { Manager, type ManagerOptions } from '../../../src/operator/runtime/manager.ts';
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

/** What the preamble is given: the guard's answer, a resource being deleted, how thrown errors map to failures. */
interface Preamble {
  admitted?: boolean;
  deleting?: boolean;
  failureOf?: ManagerOptions['failureOf'];
}

function harness(outcomes: (ReconcileResult | Error)[], preamble: Preamble = {}) {
  const resource = {
    apiVersion: 'coffer.dev/v1alpha1',
    kind: 'Integration',
    metadata: { name: 'web', namespace: 'shop', generation: 1, ...(preamble.deleting ? { deletionTimestamp: new Date() } : {}) },
  } as Reconciled;
  /** The preamble's steps and the controller's, in order. */
  const steps: string[] = [];
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
      steps.push('reconcile');
      runs.push(clock.now());
      const outcome = outcomes.shift() ?? done();
      if (outcome instanceof Error) throw outcome;
      return outcome;
    },
    finalize: async () => {
      steps.push('finalize');
    },
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
      holds: () => false,
      heldElsewhere: () => false,
      // the finalizer's writes are the cluster tier's (test/cluster/reconcile-preamble.test.ts)
      ensureFinalizer: async () => {
        steps.push('ensureFinalizer');
      },
      removeFinalizer: async () => {
        steps.push('removeFinalizer');
      },
    },
    ...(preamble.admitted !== undefined ? { admits: async () => preamble.admitted! } : {}),
    failureOf: preamble.failureOf,
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
  return { manager, clock, steps, statusWrites, events, counted, runs, key: objectKey('Integration', resource.metadata) };
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

test('the preamble: the finalizer before the reconcile; a deletion finalized, then the finalizer removed, and never reconciled', async () => {
  const live = harness([done()]);
  live.manager.enqueue(live.key);
  await live.manager.idle();
  expect(live.steps).toEqual(['ensureFinalizer', 'reconcile']);
  await live.manager.stop();

  const deleting = harness([], { deleting: true });
  deleting.manager.enqueue(deleting.key);
  await deleting.manager.idle();
  expect(deleting.steps).toEqual(['finalize', 'removeFinalizer']);
  expect(deleting.counted).toEqual(['Integration ok']);
  await deleting.manager.stop();
});

test('a resource the installation guard refuses: no finalizer, no reconcile, no status', async () => {
  const { manager, key, steps, statusWrites, counted } = harness([done()], { admitted: false });
  manager.enqueue(key);
  await manager.idle();
  expect(steps).toEqual([]);
  expect(statusWrites).toEqual([]);
  expect(counted).toEqual(['Integration ok']);
  await manager.stop();
});

test('an error the reconcile throws that failureOf knows goes the failure path with its reason; one it does not know is only retried', async () => {
  const { manager, clock, key, statusWrites, events, counted } = harness([new AppError(503, 'Unavailable', 'the database is away'), new Error('a bug')], {
    failureOf: (error) => toFailure(error),
  });
  manager.enqueue(key);
  await manager.idle();
  expect(statusWrites).toEqual([
    {
      fields: {},
      conditions: ['Ready', 'Synced'].map((type) => ({
        type,
        status: 'False',
        reason: 'CofferUnavailable',
        message: 'the database is away; the Secret keeps its last data until Coffer answers again',
      })),
    },
  ]);
  expect(events).toEqual(['Warning CofferUnavailable: the database is away; the Secret keeps its last data until Coffer answers again']);
  clock.advance(clock.pending[0]!);
  await manager.idle();
  expect(statusWrites).toHaveLength(1);
  expect(counted).toEqual(['Integration failed CofferUnavailable', 'Integration error', 'Integration error', 'Integration failed Error']);
  await manager.stop();
});

/** A resource without a finalizer, and a manager whose informer the test deletes it from (the delete event with its last copy). */
function departureHarness(holder: string | undefined, options: { finalizeFails?: boolean } = {}) {
  const objects: Reconciled[] = [];
  const handlers: Record<string, ((object: Reconciled) => void)[]> = {};
  const informer = {
    list: () => objects,
    get: (name: string, namespace?: string) => objects.find((object) => object.metadata.name === name && object.metadata.namespace === namespace),
    on: (verb: string, handler: (object: Reconciled) => void) => (handlers[verb] ??= []).push(handler),
  } as unknown as CachedInformer<Reconciled>;
  const resource = (uid: string) =>
    ({ apiVersion: 'coffer.dev/v1alpha1', kind: 'Integration', metadata: { name: 'web', namespace: 'shop', uid, generation: 1 } }) as Reconciled;
  const finalized: string[] = [];
  const reconciled: string[] = [];
  const manager = new Manager({
    logger: pino({ level: 'silent' }),
    concurrency: 1,
    clock: new ManualClock(),
    random: () => 0,
    needsFinalizer: () => false,
    status: {
      write: async () => {},
      condition: () => undefined,
      observe: () => {},
      forget: () => {},
      holds: () => holder === 'this-installation',
      heldElsewhere: () => holder !== undefined && holder !== 'this-installation',
      ensureFinalizer: async () => {},
      removeFinalizer: async () => {},
    },
    events: { record: () => {} },
  });
  manager.add({
    kind: 'Integration',
    failureConditions: ['Ready'],
    informer,
    setup: () => {},
    reconcile: async (live) => {
      reconciled.push(live.metadata.uid!);
      return done();
    },
    finalize: async (copy) => {
      finalized.push(copy.metadata.uid!);
      if (options.finalizeFails) throw new Error('Coffer refused the record deletion');
    },
  });
  const add = (uid: string) => {
    const object = resource(uid);
    objects.push(object);
    for (const handler of handlers.add ?? []) handler(object);
  };
  const remove = (uid: string) => {
    const index = objects.findIndex((object) => object.metadata.uid === uid);
    const [object] = objects.splice(index, 1);
    for (const handler of handlers.delete ?? []) handler(object!);
  };
  return { manager, add, remove, finalized, reconciled };
}

test('a resource deleted without a finalizer is finalized from its last copy while the manager leads, also when no installation held it', async () => {
  for (const holder of ['this-installation', undefined]) {
    const { manager, add, remove, finalized } = departureHarness(holder);
    manager.start();
    add('first');
    await manager.idle();
    remove('first');
    await manager.idle();
    expect(finalized).toEqual(['first']);
    await manager.stop();
  }
});

test("a deletion is not finalized here when another installation held the resource, nor from a copy seen while not leading (the next leader's sweep is for that)", async () => {
  const other = departureHarness('another-installation');
  other.manager.start();
  other.add('theirs');
  await other.manager.idle();
  other.remove('theirs');
  await other.manager.idle();
  expect(other.finalized).toEqual([]);
  await other.manager.stop();

  const follower = departureHarness('this-installation');
  follower.add('seen-by-a-follower');
  follower.remove('seen-by-a-follower');
  follower.add('successor');
  follower.manager.start();
  await follower.manager.idle();
  // (a key that comes back while it runs runs again: the queue's rule, not this test's)
  expect([...new Set(follower.reconciled)]).toEqual(['successor']);
  expect(follower.finalized).toEqual([]);
  await follower.manager.stop();
});

test('a failed finalize of a deleted copy does not hold up a new resource of the same name', async () => {
  const { manager, add, remove, finalized, reconciled } = departureHarness('this-installation', { finalizeFails: true });
  manager.start();
  add('old');
  await manager.idle();
  remove('old');
  add('new');
  await manager.idle();
  expect(finalized).toEqual(['old']);
  expect([...new Set(reconciled)]).toEqual(['old', 'new']);
  await manager.stop();
});
