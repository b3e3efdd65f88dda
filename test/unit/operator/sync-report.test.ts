import { describe, expect, test } from 'vitest';
import { syncedFields } from '../../../src/operator/controllers/integration/sync-report.ts';

const now = new Date('2026-11-26T02:00:00.000Z');
const before = '2026-11-25T10:00:00.000Z';

describe('syncedFields: the revision an Integration status names', () => {
  test.each([
    {
      case: 'a write names the revision read at',
      current: { syncedRevision: 40, lastSyncTime: before },
      kind: 'updated',
      held: 47,
      lastChange: 47,
      revision: 47,
      expected: 47,
      moved: true,
    },
    {
      case: 'a first sync of a current target names the revision read at',
      current: {},
      kind: 'unchanged',
      held: undefined,
      lastChange: 0,
      revision: 12,
      expected: 12,
      moved: true,
    },
    {
      case: 'a change newer than the status, found already in the target (read after it committed), moves the status',
      current: { syncedRevision: 8, lastSyncTime: before },
      kind: 'unchanged',
      held: 8,
      lastChange: 9,
      revision: 9,
      expected: 9,
      moved: true,
    },
    {
      case: 'a retry after a lost status write catches up with the target’s annotation',
      current: { syncedRevision: 40, lastSyncTime: before },
      kind: 'unchanged',
      held: 47,
      lastChange: 0,
      revision: 52,
      expected: 47,
      moved: true,
    },
    {
      case: 'a resync after a restart (no change routed, newer installation revision) moves nothing',
      current: { syncedRevision: 47, lastSyncTime: before },
      kind: 'unchanged',
      held: 47,
      lastChange: 0,
      revision: 90,
      expected: 47,
      moved: false,
    },
    {
      case: 'a change already reflected keeps the status (an unchanged Merge target names no revision)',
      current: { syncedRevision: 47, lastSyncTime: before },
      kind: 'unchanged',
      held: undefined,
      lastChange: 45,
      revision: 60,
      expected: 47,
      moved: false,
    },
  ] as const)('$case', ({ current, kind, held, lastChange, revision, expected, moved }) => {
    const fields = syncedFields(current, { kind, heldRevision: held }, revision, lastChange, now);
    expect(fields).toEqual(moved ? { syncedRevision: expected, lastSyncTime: now.toISOString() } : { syncedRevision: expected });
  });
});
