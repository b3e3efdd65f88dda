import type { Change } from '../../../src/operator/port/coffer-port.ts';

/** A committed change as the port's stream delivers it: a secret at the root of p1/dev unless overridden. */
export const change = (overrides: Partial<Change>): Change => ({
  revision: 1,
  committedAt: new Date(),
  projectId: 'p1',
  environmentId: 'dev',
  environmentSlug: 'dev',
  secretPath: '/',
  kind: 'secret',
  altersSecrets: true,
  ownWrite: false,
  ...overrides,
});
