import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { parse } from 'yaml';

/** .github/workflows/release.yml, read as GitHub reads it (the workflow itself runs only on GitHub). */
const ROOT = join(import.meta.dirname, '../..');
const workflow = parse(readFileSync(join(ROOT, '.github/workflows/release.yml'), 'utf8'));
const steps = workflow.jobs.release.steps as { name?: string; uses?: string; run?: string; id?: string }[];
const text = readFileSync(join(ROOT, '.github/workflows/release.yml'), 'utf8');

test('only a version tag starts it; the token may write the release and the packages, nothing else; no other secret', () => {
  expect(workflow.on).toEqual({ push: { tags: ['v*.*.*'] } });
  expect(workflow.permissions).toEqual({ contents: 'write', packages: 'write' });
  expect(Object.keys(workflow.jobs)).toEqual(['release']);
  expect(workflow.jobs.release.permissions).toBeUndefined();
  expect(new Set(text.match(/secrets\.[A-Za-z_]+/g))).toEqual(new Set(['secrets.GITHUB_TOKEN']));
});

test('nothing is published before the versions agree: the check comes before every push', () => {
  const check = steps.findIndex((step) => step.id === 'version');
  const firstPush = steps.findIndex((step) => step.uses?.startsWith('docker/build-push-action') || step.run?.includes('helm push'));
  expect(check).toBeGreaterThanOrEqual(0);
  expect(check).toBeLessThan(firstPush);
  for (const source of ['package.json', 'helm/coffer/Chart.yaml', 'deploy/server/deployment.yaml']) expect(steps[check]!.run).toContain(source);
});

test('it publishes the image the manifests and the chart name, and the chart npm run chart packages', () => {
  expect(workflow.env.IMAGE).toBe('ghcr.io/${{ github.repository_owner }}/coffer');
  const values = parse(readFileSync(join(ROOT, 'helm/coffer/values.yaml'), 'utf8'));
  expect(values.image.repository).toBe('ghcr.io/coffer-dev/coffer');
  expect(steps.some((step) => step.run === 'npm run chart')).toBe(true);
  expect(steps.find((step) => step.run?.includes('helm push'))!.run).toContain('dist/chart/coffer-${{ steps.version.outputs.version }}.tgz');
});

test('the build context is an allow-list: package files, bin, migrations, src, the console sources, the TypeScript configs and the bundling script only', () => {
  const lines = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
    .split('\n')
    .filter((line) => line && !line.startsWith('#'));
  expect(lines[0]).toBe('*');
  expect(lines.slice(1).sort()).toEqual([
    '!bin/',
    '!console/',
    '!migrations/',
    '!package-lock.json',
    '!package.json',
    '!scripts/bundle-client-node.ts',
    '!src/',
    '!tsconfig.build.json',
    '!tsconfig.json',
  ]);
});
