/**
 * Packages the Helm chart (helm/coffer) for installing without a checkout:
 *
 *   npm run chart [-- --out DIR] [-- --with helm|tar]
 *
 *   DIR/coffer-<version>.tgz   the chart archive (`helm install coffer ./coffer-0.1.0.tgz`, or a chart repository)
 *   DIR/oci/                   the same archive as an OCI artifact in an OCI image layout, tagged <version>
 *                              (`oras cp --from-oci-layout DIR/oci:<version> <registry>/coffer:<version>`)
 *
 * DIR defaults to dist/chart. The archive comes from `helm package` when a helm is found ($HELM, helm on PATH,
 * or the one scripts/k8s-testbin.sh built); without one it is written with tar in the layout `helm package`
 * writes (one top-level directory named after the chart, symlinks followed), so `helm install`, `helm lint`
 * and `helm push` accept it all the same. The last line of stdout is DIR.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { parse } from 'yaml';

const ROOT = path.resolve(import.meta.dirname, '..');
const CHART = path.join(ROOT, 'helm', 'coffer');

/** The media types helm itself gives a chart pushed to an OCI registry. */
export const HELM_CONFIG_MEDIA_TYPE = 'application/vnd.cncf.helm.config.v1+json';
export const HELM_CHART_MEDIA_TYPE = 'application/vnd.cncf.helm.chart.content.v1.tar+gzip';
const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
const OCI_INDEX = 'application/vnd.oci.image.index.v1+json';

interface ChartMetadata {
  name: string;
  version: string;
  appVersion?: string;
  [field: string]: unknown;
}

function log(message: string): void {
  process.stderr.write(`chart: ${message}\n`);
}

function tryRun(command: string, args: string[]): string | null {
  try {
    return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

function findHelm(): string | null {
  if (process.env.HELM) return process.env.HELM;
  if (tryRun('helm', ['version', '--short']) !== null) return 'helm';
  const testbin = tryRun(path.join(ROOT, 'scripts', 'k8s-testbin.sh'), ['--print-dir'])
    ?.split('\n')
    .at(-1);
  const built = testbin ? path.join(testbin, 'helm') : null;
  return built && existsSync(built) ? built : null;
}

/** `helm package`, or the same layout with tar: `<name>/…`, symlinks followed, stable order and owner. */
function packageChart(chart: ChartMetadata, out: string, packager: string | undefined): string {
  const archive = path.join(out, `${chart.name}-${chart.version}.tgz`);
  const helm = packager === 'tar' ? null : findHelm();
  if (packager === 'helm' && !helm) throw new Error('--with helm: no helm found ($HELM, PATH, scripts/k8s-testbin.sh)');
  if (helm) {
    log(`helm package with ${helm}`);
    execFileSync(helm, ['package', CHART, '--destination', out], {
      stdio: ['ignore', 'ignore', 'inherit'],
      // helm must not read or write the user's config, cache or repositories
      env: { ...process.env, HELM_CONFIG_HOME: path.join(out, '.helm'), HELM_CACHE_HOME: path.join(out, '.helm'), HELM_DATA_HOME: path.join(out, '.helm') },
    });
    rmSync(path.join(out, '.helm'), { recursive: true, force: true });
  } else {
    log(`${packager === 'tar' ? '--with tar' : 'no helm found ($HELM, PATH, scripts/k8s-testbin.sh)'}: writing the archive with tar in the layout helm package writes`);
    const tar = execFileSync(
      'tar',
      [
        '--create',
        '--dereference',
        '--sort=name',
        '--owner=0',
        '--group=0',
        '--numeric-owner',
        '--mtime=@0',
        '--file',
        '-',
        '--directory',
        path.dirname(CHART),
        path.basename(CHART),
      ],
      { stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 * 1024 * 1024 },
    );
    // zlib's gzip header carries no name and no time: the same chart gives the same bytes
    writeFileSync(archive, gzipSync(tar, { level: 9 }));
  }
  if (!existsSync(archive)) throw new Error(`expected ${archive}`);
  return archive;
}

function digestOf(content: Buffer): string {
  return `sha256:${createHash('sha256').update(content).digest('hex')}`;
}

/**
 * An OCI image layout (image-spec v1.1: oci-layout, index.json, blobs/sha256/…) holding the chart as helm pushes
 * it: config = the chart's metadata as JSON, one layer = the archive. Written here because no command we ship
 * writes a layout (`helm push` needs a registry); the format is these three small documents.
 */
function writeOciLayout(chart: ChartMetadata, archive: string, layout: string): string {
  rmSync(layout, { recursive: true, force: true });
  mkdirSync(path.join(layout, 'blobs', 'sha256'), { recursive: true });
  const blob = (content: Buffer, mediaType: string) => {
    const digest = digestOf(content);
    writeFileSync(path.join(layout, 'blobs', 'sha256', digest.slice('sha256:'.length)), content);
    return { mediaType, digest, size: content.length };
  };
  const config = blob(Buffer.from(JSON.stringify(chart)), HELM_CONFIG_MEDIA_TYPE);
  const layer = blob(readFileSync(archive), HELM_CHART_MEDIA_TYPE);
  const manifest = blob(
    Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: OCI_MANIFEST,
        config,
        layers: [layer],
        annotations: {
          'org.opencontainers.image.title': chart.name,
          'org.opencontainers.image.version': chart.version,
          'org.opencontainers.image.description': String(chart.description ?? ''),
        },
      }),
    ),
    OCI_MANIFEST,
  );
  writeFileSync(path.join(layout, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  writeFileSync(
    path.join(layout, 'index.json'),
    JSON.stringify({ schemaVersion: 2, mediaType: OCI_INDEX, manifests: [{ ...manifest, annotations: { 'org.opencontainers.image.ref.name': chart.version } }] }),
  );
  return manifest.digest;
}

function main(): void {
  const { values } = parseArgs({ options: { out: { type: 'string', default: path.join(ROOT, 'dist', 'chart') }, with: { type: 'string' } } });
  if (values.with !== undefined && values.with !== 'helm' && values.with !== 'tar') throw new Error(`--with takes helm or tar, not '${values.with}'`);
  const out = path.resolve(values.out);
  mkdirSync(out, { recursive: true });
  const chart = parse(readFileSync(path.join(CHART, 'Chart.yaml'), 'utf8')) as ChartMetadata;
  const archive = packageChart(chart, out, values.with);
  log(`chart archive: ${archive}`);
  const digest = writeOciLayout(chart, archive, path.join(out, 'oci'));
  log(`OCI layout: ${path.join(out, 'oci')} (tag ${chart.version}, manifest ${digest})`);
  process.stdout.write(`${out}\n`);
}

main();
