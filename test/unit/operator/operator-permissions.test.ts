import { expect, test } from 'vitest';
import { NotReadyError } from '../../../src/operator/controllers/context.ts';
import { MISSING_PERMISSIONS, OperatorPermissions } from '../../../src/operator/controllers/operator-permissions.ts';
import { OPERATOR_NEEDS, OPERATOR_ROLE_SLUG, type PermissionNeed } from '../../../src/permissions/operator-role.ts';

/**
 * The operator's start check (src/operator/controllers/operator-permissions.ts): given what
 * GET effective-permissions answers for a project, it names exactly what the identity lacks,
 * logs it once, and asks no more once everything is held.
 */

function checker(answers: PermissionNeed[][]) {
  const asked: string[] = [];
  const logged: { level: string; message: string }[] = [];
  const port = {
    permissions: async (projectId: string) => {
      asked.push(projectId);
      return answers.shift() ?? [];
    },
  };
  const logger = {
    error: (_fields: object, message: string) => logged.push({ level: 'error', message }),
    info: (_fields: object, message: string) => logged.push({ level: 'info', message }),
  };
  return { permissions: new OperatorPermissions(port, logger as never), asked, logged };
}

const VIEWER: PermissionNeed[] = [
  { subject: 'workspace', actions: ['read'] },
  { subject: 'environments', actions: ['read'] },
  { subject: 'secret-folders', actions: ['read'] },
  { subject: 'secrets', actions: ['read'] },
  { subject: 'secret-imports', actions: ['read'] },
  { subject: 'integrations', actions: ['read'] },
];

test('a viewer lacks the integration writes: MissingPermissions names exactly them and the role to give, logged once', async () => {
  const { permissions, logged } = checker([VIEWER, VIEWER]);
  const failure = await permissions.assertHeld('p1').catch((error: unknown) => error);
  expect(failure).toBeInstanceOf(NotReadyError);
  expect(failure).toMatchObject({ reason: MISSING_PERMISSIONS });
  expect((failure as NotReadyError).message).toContain('integrations: create, edit, delete');
  expect((failure as NotReadyError).message).not.toContain('secrets: read');
  expect((failure as NotReadyError).message).toContain(OPERATOR_ROLE_SLUG);
  await expect(permissions.assertHeld('p1')).rejects.toMatchObject({ reason: MISSING_PERMISSIONS });
  expect(logged.filter((line) => line.level === 'error')).toHaveLength(1);
});

test('once every need is held the project is not asked about again, and the fix is logged', async () => {
  const { permissions, asked, logged } = checker([[], OPERATOR_NEEDS.map((need) => ({ ...need }))]);
  await expect(permissions.assertHeld('p2')).rejects.toMatchObject({ reason: MISSING_PERMISSIONS });
  await permissions.assertHeld('p2');
  await permissions.assertHeld('p2');
  expect(asked).toEqual(['p2', 'p2']);
  expect(logged.map((line) => line.level)).toEqual(['error', 'info']);
});
