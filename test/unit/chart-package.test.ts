import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { parse } from 'yaml';

/**
 * scripts/chart.ts (`npm run chart`): the chart archive a user installs without a checkout, and the same
 * archive as an OCI artifact in an OCI image layout, as helm pushes a chart (config = Chart.yaml as JSON,
 * one layer = the archive).
 */
const ROOT = join(import.meta.dirname, '../..');
const out = mkdtempSync(join(tmpdir(), 'coffer-chart-'));
const chart = parse(readFileSync(join(ROOT, 'helm/coffer/Chart.yaml'), 'utf8')) as { name: string; version: string };
const archive = join(out, `${chart.name}-${chart.version}.tgz`);
let stdout: string;

beforeAll(() => {
  // the tar path (test/cluster/packaging.test.ts renders both paths' archives with helm)
  stdout = execFileSync(process.execPath, [join(ROOT, 'scripts/chart.ts'), '--out', out, '--with', 'tar'], { encoding: 'utf8' });
}, 60_000);
afterAll(() => rmSync(out, { recursive: true, force: true }));

const blob = (digest: string) => readFileSync(join(out, 'oci', 'blobs', 'sha256', digest.replace(/^sha256:/, '')));
const json = (file: string) => JSON.parse(readFileSync(join(out, 'oci', file), 'utf8'));

test('the archive holds the chart under one directory named after it, with the CRDs and dashboards the symlinks point to', () => {
  expect(stdout.trim().split('\n').at(-1)).toBe(out);
  const files = execFileSync('tar', ['--list', '--gzip', '--file', archive], { encoding: 'utf8' }).split('\n').filter(Boolean);
  expect(new Set(files.map((file) => file.split('/')[0]))).toEqual(new Set([chart.name]));
  for (const file of ['Chart.yaml', 'values.yaml', 'templates/deployment.yaml', 'files/crds/integrations.yaml', 'files/monitoring/operator-alerts.yaml'])
    expect(files, file).toContain(`coffer/${file}`);
  const packaged = execFileSync('tar', ['--extract', '--gzip', '--to-stdout', '--file', archive, 'coffer/files/crds/integrations.yaml'], { encoding: 'utf8' });
  expect(packaged).toBe(readFileSync(join(ROOT, 'crds/integrations.yaml'), 'utf8'));
});

test('the OCI layout tags one manifest with the chart version: helm config and chart layer, digests and sizes that match the blobs', () => {
  expect(json('oci-layout')).toEqual({ imageLayoutVersion: '1.0.0' });
  const index = json('index.json');
  expect(index.manifests).toHaveLength(1);
  const [entry] = index.manifests;
  expect(entry.annotations['org.opencontainers.image.ref.name']).toBe(chart.version);
  const manifestBytes = blob(entry.digest);
  expect(manifestBytes.length).toBe(entry.size);
  const manifest = JSON.parse(manifestBytes.toString('utf8'));
  expect(manifest.config.mediaType).toBe('application/vnd.cncf.helm.config.v1+json');
  expect(JSON.parse(blob(manifest.config.digest).toString('utf8'))).toMatchObject({ name: 'coffer', version: chart.version, apiVersion: 'v2' });
  expect(manifest.layers).toEqual([
    {
      mediaType: 'application/vnd.cncf.helm.chart.content.v1.tar+gzip',
      digest: `sha256:${createHash('sha256').update(readFileSync(archive)).digest('hex')}`,
      size: readFileSync(archive).length,
    },
  ]);
  for (const described of [entry, manifest.config, ...manifest.layers])
    expect(`sha256:${createHash('sha256').update(blob(described.digest)).digest('hex')}`).toBe(described.digest);
});

test('packaging twice gives the same bytes', () => {
  const again = mkdtempSync(join(tmpdir(), 'coffer-chart-again-'));
  try {
    execFileSync(process.execPath, [join(ROOT, 'scripts/chart.ts'), '--out', again, '--with', 'tar'], { stdio: 'ignore' });
    expect(readFileSync(join(again, 'coffer-0.1.0.tgz')).equals(readFileSync(archive))).toBe(true);
  } finally {
    rmSync(again, { recursive: true, force: true });
  }
});
