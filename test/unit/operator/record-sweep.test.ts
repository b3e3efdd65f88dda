import { expect, test } from 'vitest';
import type { ControllerContext } from '../../../src/operator/controllers/context.ts';
import { sweepRecords } from '../../../src/operator/controllers/integration/record-sweep.ts';
import type { IntegrationResource } from '../../../src/operator/resources.ts';
import type { CachedInformer } from '../../../src/operator/runtime/informers.ts';

// The sweep's decisions, on a port and an apiserver that answer from tables: the cluster tests
// (test/cluster/claim-by-target.test.ts) show it against a real apiserver and database.
const INSTALLATION = '00000000-0000-4000-8000-0000000000aa';
const OTHER = '00000000-0000-4000-8000-0000000000bb';

const resource = (namespace: string, name: string, holder = INSTALLATION) =>
  ({ kind: 'Integration', metadata: { namespace, name }, spec: {}, status: { installationId: holder } }) as unknown as IntegrationResource;

function sweep(records: string[][], cached: IntegrationResource[], live: IntegrationResource[], going = () => true) {
  const read: string[] = [];
  const deleted: string[] = [];
  const pages = [...records];
  const context = {
    identity: { installationId: INSTALLATION, clusterName: 'local' },
    port: {
      integrations: {
        listManaged: async () => {
          const managedBy = pages.shift() ?? [];
          return { managedBy, next: pages.length > 0 ? managedBy.at(-1)! : null };
        },
        delete: async (_cluster: string, managedBy: string) => void deleted.push(managedBy),
      },
    },
    kube: {
      readResource: async (_kind: string, namespace: string, name: string) => {
        read.push(`${namespace}/${name}`);
        return live.find((object) => object.metadata.namespace === namespace && object.metadata.name === name);
      },
    },
  } as unknown as ControllerContext;
  const informer = {
    get: (name: string, namespace?: string) => cached.find((object) => object.metadata.namespace === namespace && object.metadata.name === name),
  } as unknown as CachedInformer<IntegrationResource>;
  return { result: sweepRecords(context, informer, { going }), read, deleted };
}

test('drops the records of Integrations gone or held elsewhere, as the apiserver confirms, over every page; keeps the rest', async () => {
  const kept = resource('shop', 'kept');
  const lagging = resource('shop', 'lagging');
  const elsewhere = resource('shop', 'elsewhere', OTHER);
  const { result, read, deleted } = sweep(
    [
      ['shop/elsewhere', 'shop/gone'],
      ['shop/kept', 'shop/lagging'],
    ],
    [kept, elsewhere],
    [lagging, elsewhere],
  );
  expect(await result).toEqual({ dropped: 2, failed: 0 });
  expect(deleted).toEqual(['shop/elsewhere', 'shop/gone']);
  // the informer did not have it, the apiserver does: a lagging watch costs no record
  expect(read).toEqual(['shop/elsewhere', 'shop/gone', 'shop/lagging']);
});

test('a record whose name no Integration resource can have is left alone, and not looked up', async () => {
  const { result, read, deleted } = sweep([['a/b/c', 'no-slash', '/x', 'y/', 'shop/gone']], [], []);
  expect(await result).toEqual({ dropped: 1, failed: 0 });
  expect(read).toEqual(['shop/gone']);
  expect(deleted).toEqual(['shop/gone']);
});

test('stops as soon as leadership ends', async () => {
  let going = true;
  const { result, deleted } = sweep([['shop/one', 'shop/two']], [], [], () => {
    const now = going;
    going = false;
    return now;
  });
  expect(await result).toEqual({ dropped: 1, failed: 0 });
  expect(deleted).toEqual(['shop/one']);
});
