import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, test } from 'vitest';
import { parse } from 'yaml';
import { CONDITION_REASONS, EVENT_REASONS, isConditionReason } from '../../../src/operator/runtime/condition-reason.ts';

/** The README's table "Condition reasons", the code's vocabulary and the CRDs' descriptions name the same reasons with the same meanings. */
const ROOT = path.resolve(import.meta.dirname, '../../..');
const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');

function readmeTable(): { reason: string; on: string; meaning: string }[] {
  const section = README.split('\n### Condition reasons\n')[1]?.split('\n#')[0] ?? '';
  return [...section.matchAll(/^\| `([A-Za-z]+)` \| (condition|Event) \| (.+) \|$/gm)].map(([, reason, on, meaning]) => ({
    reason: reason!,
    on: on!,
    meaning: meaning!,
  }));
}

test('the README table lists every reason of the code, in its order, with the same meaning, and nothing else', () => {
  const expected = [
    ...Object.entries(CONDITION_REASONS).map(([reason, meaning]) => ({ reason, on: 'condition', meaning })),
    ...Object.entries(EVENT_REASONS).map(([reason, meaning]) => ({ reason, on: 'Event', meaning })),
  ];
  expect(readmeTable()).toEqual(expected);
});

/** Every string in a parsed YAML document. */
function strings(node: unknown): string[] {
  if (typeof node === 'string') return [node];
  if (node && typeof node === 'object') return Object.values(node).flatMap(strings);
  return [];
}

test("the reasons the CRDs' descriptions cite are in the vocabulary", () => {
  const dir = path.join(ROOT, 'crds');
  const cited = readdirSync(dir)
    .filter((file) => file.endsWith('.yaml') && file !== 'kustomization.yaml')
    .flatMap((file) => {
      const descriptions = strings(parse(readFileSync(path.join(dir, file), 'utf8')));
      return descriptions.flatMap((text) => [...text.matchAll(/^A CamelCase reason .*e\.g\. ([A-Za-z, ]+)\.$/g)].flatMap((match) => match[1]!.split(', ')));
    });
  expect(cited.length).toBeGreaterThan(0);
  expect(cited.filter((reason) => !isConditionReason(reason))).toEqual([]);
});

test('a code that is not a reason is not taken for one', () => {
  expect(isConditionReason('FolderNotFound')).toBe(true);
  expect(isConditionReason('toString')).toBe(false);
  expect(isConditionReason('Failed')).toBe(false);
});
