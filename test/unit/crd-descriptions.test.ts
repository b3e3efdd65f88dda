import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { parse } from 'yaml';

/**
 * `kubectl explain` answers from the CRDs' descriptions: every field of every
 * version of every Coffer CRD has one, and a description that sends the
 * reader to a README section names one that exists.
 */
const CRD_DIR = path.resolve(import.meta.dirname, '../../crds');
const README = readFileSync(path.resolve(import.meta.dirname, '../../README.md'), 'utf8');

interface SchemaNode {
  description?: string;
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
}

interface Crd {
  spec: { names: { kind: string }; versions: { name: string; schema: { openAPIV3Schema: SchemaNode } }[] };
}

const crds = readdirSync(CRD_DIR)
  .filter((file) => file.endsWith('.yaml') && file !== 'kustomization.yaml')
  .map((file) => parse(readFileSync(path.join(CRD_DIR, file), 'utf8')) as Crd);

/** Every field below `node`, by its path (`spec.sources[].environment`), with its description. */
function fields(node: SchemaNode, prefix = ''): { path: string; description: string | undefined }[] {
  const found: { path: string; description: string | undefined }[] = [];
  for (const [name, child] of Object.entries(node.properties ?? {})) {
    const fieldPath = prefix ? `${prefix}.${name}` : name;
    found.push({ path: fieldPath, description: child.description }, ...fields(child, fieldPath));
    if (child.items) found.push(...fields(child.items, `${fieldPath}[]`));
  }
  return found;
}

const readmeHeadings = new Set([...README.matchAll(/^#{1,4} (.+)$/gm)].map((match) => match[1]!.trim()));

describe('CRD descriptions', () => {
  test('the three kinds are here', () => {
    expect(crds.map((crd) => crd.spec.names.kind).sort()).toEqual(['Integration', 'SecretImport', 'SecretsProject']);
  });

  for (const crd of crds) {
    for (const version of crd.spec.versions) {
      const all = fields(version.schema.openAPIV3Schema);

      test(`${crd.spec.names.kind} ${version.name}: every field has a description`, () => {
        expect(all.length).toBeGreaterThan(10);
        // the apiserver refuses anything but name and generateName under the top-level metadata
        expect(all.filter((field) => field.path !== 'metadata' && !field.description?.trim()).map((field) => field.path)).toEqual([]);
      });

      test(`${crd.spec.names.kind} ${version.name}: README sections a description names exist`, () => {
        const named = all.flatMap((field) => [...(field.description ?? '').matchAll(/README, "([^"]+)"/g)].map((match) => match[1]!));
        expect(named.filter((section) => !readmeHeadings.has(section))).toEqual([]);
      });
    }
  }
});
