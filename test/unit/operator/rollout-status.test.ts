import { expect, test } from 'vitest';
import { rolloutFinished } from '../../../src/operator/controllers/reload/rollout-status.ts';
import type { Workload } from '../../../src/operator/runtime/informers.ts';

const at = (generation: number, spec: object, status: object) => ({ metadata: { name: 'api', namespace: 'shop', generation }, spec, status }) as Workload;
const complete = { observedGeneration: 3, replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2 };

test.each([
  ['finished', at(3, { replicas: 2 }, complete), true],
  ['its controller has not seen the new spec', at(4, { replicas: 2 }, complete), false],
  ['no status yet', at(1, { replicas: 1 }, {}), false],
  ['a replica runs the old template', at(3, { replicas: 2 }, { ...complete, updatedReplicas: 1 }), false],
  ['an old replica is still terminating', at(3, { replicas: 2 }, { ...complete, replicas: 3 }), false],
  ['an updated replica is not available', at(3, { replicas: 2 }, { ...complete, availableReplicas: 1 }), false],
  ['replicas unset means one', at(3, {}, { observedGeneration: 3, replicas: 1, updatedReplicas: 1, availableReplicas: 1 }), true],
])('a Deployment: %s', (_case, workload, finished) => {
  expect(rolloutFinished('Deployment', workload)).toBe(finished);
});

test('a StatefulSet needs every replica updated and ready', () => {
  expect(rolloutFinished('StatefulSet', at(3, { replicas: 2 }, { observedGeneration: 3, updatedReplicas: 2, readyReplicas: 2 }))).toBe(true);
  expect(rolloutFinished('StatefulSet', at(3, { replicas: 2 }, { observedGeneration: 3, updatedReplicas: 2, readyReplicas: 1 }))).toBe(false);
});

test('a DaemonSet needs every scheduled pod updated and available', () => {
  const status = { observedGeneration: 3, desiredNumberScheduled: 4, updatedNumberScheduled: 4, numberAvailable: 4 };
  expect(rolloutFinished('DaemonSet', at(3, {}, status))).toBe(true);
  expect(rolloutFinished('DaemonSet', at(3, {}, { ...status, updatedNumberScheduled: 3 }))).toBe(false);
  expect(rolloutFinished('DaemonSet', at(3, {}, { ...status, numberAvailable: 3 }))).toBe(false);
});

test("a copy older than the operator's own patch is still rolling, whatever its status says", () => {
  expect(rolloutFinished('Deployment', at(3, { replicas: 2 }, complete), 4)).toBe(false);
  expect(rolloutFinished('Deployment', at(3, { replicas: 2 }, complete), 3)).toBe(true);
});
