import { ApiException } from '@kubernetes/client-node';
import { expect, test } from 'vitest';
import { AppError } from '../../../src/errors.ts';
import { NotReadyError } from '../../../src/operator/controllers/context.ts';
import { asNotReady, ignoreCofferNotFound, isCofferNotFound, toFailure } from '../../../src/operator/controllers/failures.ts';
import { isKubeNotFound } from '../../../src/operator/runtime/kube-api.ts';

const cofferNotFound = new AppError(404, 'NotFound', "folder '/app' was not found");
const apiserverNotFound = new ApiException(404, 'secrets "app" not found', {}, {});

test('each not-found helper answers for its own family only: Coffer’s 404, the apiserver’s 404', () => {
  expect([isCofferNotFound(cofferNotFound), isCofferNotFound(apiserverNotFound)]).toEqual([true, false]);
  expect([isKubeNotFound(apiserverNotFound), isKubeNotFound(cofferNotFound)]).toEqual([true, false]);
  expect(ignoreCofferNotFound(cofferNotFound)).toBeUndefined();
  expect(() => ignoreCofferNotFound(apiserverNotFound)).toThrow(apiserverNotFound);
});

test('a thrown error as the failure path reports it: its reason, message and retry; what is no refusal is no Failure', () => {
  expect(toFailure(cofferNotFound)).toEqual({ reason: 'Rejected', message: "folder '/app' was not found", retry: { afterMs: 60_000 } });
  expect(toFailure(cofferNotFound, 'NotFound')?.reason).toBe('NotFound');
  expect(toFailure(new AppError(503, 'Unavailable', 'the database is away'))).toMatchObject({ reason: 'CofferUnavailable', retry: { afterMs: 10_000 } });
  expect(toFailure(new AppError(401, 'Unauthorized', 'token expired'))?.reason).toBe('CofferAuthFailed');
  expect(toFailure(new NotReadyError('TargetMissing', 'no Secret to merge into', { afterMs: 30_000 }))).toEqual({
    reason: 'TargetMissing',
    message: 'no Secret to merge into',
    retry: { afterMs: 30_000 },
  });
  expect(toFailure(apiserverNotFound)).toBeUndefined();
  expect(toFailure(new AppError(500, 'Internal', 'a bug'))).toBeUndefined();
});

test('only the access refusals of project claims become their own reason; another 403 code stays an error', () => {
  const revoked = asNotReady(new AppError(403, 'GrantRevoked', 'the grant was revoked'));
  expect(revoked).toBeInstanceOf(NotReadyError);
  expect((revoked as NotReadyError).reason).toBe('GrantRevoked');
  const other = new AppError(403, 'PermissionDenied', 'no');
  expect(asNotReady(other)).toBe(other);
});
