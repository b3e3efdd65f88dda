import { expect, test } from 'vitest';
import { ProjectUsers } from '../../../src/operator/controllers/integration/project-users.ts';
import type { IntegrationResource, SecretsProject } from '../../../src/operator/resources.ts';
import type { CachedInformer } from '../../../src/operator/runtime/informers.ts';

/** An informer's cache and its add/update/delete handlers, fed by hand (no apiserver: what ProjectUsers sees of one). */
function handFedInformer() {
  const objects = new Map<string, IntegrationResource>();
  const handlers: Record<string, ((resource: IntegrationResource) => void)[]> = { add: [], update: [], delete: [] };
  const informer = {
    on: (verb: string, handler: (resource: IntegrationResource) => void) => handlers[verb]!.push(handler),
    list: (namespace?: string) => [...objects.values()].filter((resource) => namespace === undefined || resource.metadata.namespace === namespace),
  } as unknown as CachedInformer<IntegrationResource>;
  const fire = (verb: 'add' | 'update' | 'delete', resource: IntegrationResource) => {
    const id = `${resource.metadata.namespace}/${resource.metadata.name}`;
    if (verb === 'delete') objects.delete(id);
    else objects.set(id, resource);
    for (const handler of handlers[verb]!) handler(resource);
  };
  return { informer, fire };
}

function integration(namespace: string, name: string, project: { projectRef?: { name: string }; projectSlug?: string }): IntegrationResource {
  return { metadata: { namespace, name }, spec: { ...project, environment: 'dev', target: { name } } };
}

const shop: SecretsProject = { metadata: { namespace: 'shop', name: 'web' }, spec: { slug: 'web-shop' }, status: { slug: 'web-shop' } } as SecretsProject;
const names = (resources: IntegrationResource[]) => resources.map((resource) => `${resource.metadata.namespace}/${resource.metadata.name}`).sort();

test("a SecretsProject's users: its namespace's Integrations naming it, and any namespace's naming its slug, as they come, change and go", () => {
  const { informer, fire } = handFedInformer();
  const users = new ProjectUsers(informer);
  fire('add', integration('shop', 'by-ref', { projectRef: { name: 'web' } }));
  fire('add', integration('shop', 'other-ref', { projectRef: { name: 'other' } }));
  fire('add', integration('billing', 'same-name-elsewhere', { projectRef: { name: 'web' } }));
  fire('add', integration('billing', 'by-slug', { projectSlug: 'web-shop' }));
  fire('add', integration('ops', 'other-slug', { projectSlug: 'ops' }));
  expect(names(users.of(shop))).toEqual(['billing/by-slug', 'shop/by-ref']);

  fire('update', integration('ops', 'other-slug', { projectSlug: 'web-shop' }));
  fire('update', integration('billing', 'by-slug', { projectRef: { name: 'web' } }));
  expect(names(users.of(shop))).toEqual(['ops/other-slug', 'shop/by-ref']);

  fire('add', integration('shop', 'slug-at-home', { projectSlug: 'web-shop' }));
  fire('delete', integration('ops', 'other-slug', { projectSlug: 'web-shop' }));
  expect(names(users.of(shop))).toEqual(['shop/by-ref', 'shop/slug-at-home']);
  // before its status names the slug, a SecretsProject is used by reference only
  expect(names(users.of({ ...shop, status: {} }))).toEqual(['shop/by-ref']);
});

test("a SecretsProject's event wakes its users only when it changes what they resolve it by; its own claim and status writes wake nobody", () => {
  const { informer, fire } = handFedInformer();
  const users = new ProjectUsers(informer);
  fire('add', integration('shop', 'by-ref', { projectRef: { name: 'web' } }));
  const declared = (changes: { generation?: number; ready?: string; annotations?: Record<string, string>; status?: Record<string, unknown> } = {}): SecretsProject =>
    ({
      metadata: { namespace: 'shop', name: 'web', uid: 'uid-1', generation: changes.generation ?? 1, annotations: changes.annotations ?? {} },
      spec: { slug: 'web-shop' },
      status: {
        slug: 'web-shop',
        conditions: [{ type: 'Ready', status: changes.ready ?? 'False', reason: 'Declaring' }],
        ...changes.status,
      },
    }) as unknown as SecretsProject;

  expect(names(users.changedFor(declared()))).toEqual(['shop/by-ref']);
  // a status write that changes nothing its users read (a time, a count) wakes nobody
  expect(users.changedFor(declared({ status: { lastSyncTime: '2026-11-26T00:00:00Z' } }))).toEqual([]);
  expect(names(users.changedFor(declared({ ready: 'True' })))).toEqual(['shop/by-ref']);
  expect(users.changedFor(declared({ ready: 'True' }))).toEqual([]);
  expect(names(users.changedFor(declared({ ready: 'True', generation: 2 })))).toEqual(['shop/by-ref']);
  expect(names(users.changedFor(declared({ ready: 'True', generation: 2, annotations: { 'coffer.dev/installation': 'other' } })))).toEqual(['shop/by-ref']);
  // gone: its users are told, and a SecretsProject of the same name that comes back is news again
  expect(names(users.goneFor(declared({ ready: 'True', generation: 2 })))).toEqual(['shop/by-ref']);
  expect(names(users.changedFor(declared({ ready: 'True', generation: 2, annotations: { 'coffer.dev/installation': 'other' } })))).toEqual(['shop/by-ref']);
});
