/**
 * Rendering and applying plain manifests in cluster tests: helm and kustomize from the test binary
 * dir (scripts/k8s-testbin.sh), and server-side apply (optionally as a dry run) through raw HTTP.
 *
 * Raw HTTP rather than @kubernetes/client-node's KubernetesObjectApi: that one serializes through
 * its typed models, which silently drop fields they do not know (`default`, `enum`, a misspelt
 * field, ...). Here the object goes to the apiserver exactly as rendered, with
 * fieldValidation=Strict, so an unknown or duplicate field is an error.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { KubeConfig } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { REPO_ROOT } from './controlplane.ts';

const execFileP = promisify(execFile);

export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string>; [key: string]: unknown };
  [key: string]: any;
}

/** helm's config, cache and data homes: a throwaway dir, never the user's. */
let helmHome: string | undefined;

let binDirPromise: Promise<string> | undefined;
/** The directory with helm and kustomize (built by the global setup's scripts/k8s-testbin.sh). */
export function testBinDir(): Promise<string> {
  binDirPromise ??= execFileP('bash', [path.join(REPO_ROOT, 'scripts', 'k8s-testbin.sh'), '--print-dir'], { cwd: REPO_ROOT }).then(({ stdout }) =>
    stdout.trim().split('\n').pop()!.trim(),
  );
  return binDirPromise;
}

export interface RunResult {
  stdout: string;
  stderr: string;
}

/** Runs a binary from the test binary dir; rejects with its stderr on a non-zero exit. */
export async function runTool(tool: 'helm' | 'kustomize', args: string[], opts: { cwd?: string } = {}): Promise<RunResult> {
  const bin = path.join(await testBinDir(), tool);
  if (!helmHome) {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'coffer-helm-home-'));
    helmHome = dir;
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  try {
    const { stdout, stderr } = await execFileP(bin, args, {
      cwd: opts.cwd ?? REPO_ROOT,
      maxBuffer: 64 * 1024 * 1024,
      // helm must not read or write the user's config, cache or repositories
      // and render offline: `lookup` finds nothing, as in `helm template`
      env: {
        ...process.env,
        HELM_CONFIG_HOME: path.join(helmHome, 'config'),
        HELM_CACHE_HOME: path.join(helmHome, 'cache'),
        HELM_DATA_HOME: path.join(helmHome, 'data'),
        KUBECONFIG: path.join(helmHome, 'no-kubeconfig'),
      },
    });
    return { stdout, stderr };
  } catch (error) {
    const e = error as { stderr?: string; stdout?: string; code?: number };
    throw new Error(`${tool} ${args.join(' ')} failed (exit ${e.code}):\n${e.stderr || e.stdout || String(error)}`, { cause: error });
  }
}

/** The objects of a multi-document YAML stream (empty documents skipped). */
export function parseManifests(text: string): Manifest[] {
  return parseAllDocuments(text)
    .map((document) => {
      if (document.errors.length > 0) throw new Error(`invalid YAML: ${document.errors.map((e) => e.message).join('; ')}`);
      return document.toJSON() as Manifest | null;
    })
    .filter((object): object is Manifest => object !== null && typeof object === 'object');
}

interface ResourceInfo {
  name: string;
  namespaced: boolean;
}

export interface RawResponse {
  status: number;
  body: any;
}

/** Minimal raw client for one user of a kubeconfig. */
export class RawKube {
  readonly #kc: KubeConfig;
  readonly #resources = new Map<string, Promise<Map<string, ResourceInfo>>>();

  constructor(kc: KubeConfig) {
    this.#kc = kc;
  }

  async request(method: string, urlPath: string, body?: unknown, contentType = 'application/json'): Promise<RawResponse> {
    const server = new URL(this.#kc.getCurrentCluster()!.server);
    const opts: https.RequestOptions = { method, hostname: server.hostname, port: server.port, path: urlPath, headers: {} };
    await this.#kc.applyToHTTPSOptions(opts);
    const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    opts.headers = { ...(opts.headers as Record<string, string>), accept: 'application/json', ...(payload ? { 'content-type': contentType } : {}) };
    return new Promise((resolve, reject) => {
      const req = https.request(opts, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          let parsed: unknown = text;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            /* not JSON */
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
      });
      req.on('error', reject);
      if (payload) req.write(payload);
      req.end();
    });
  }

  /** Plural name and scope of a kind, from discovery. */
  async resource(apiVersion: string, kind: string): Promise<ResourceInfo> {
    let list = this.#resources.get(apiVersion);
    if (!list) {
      const url = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
      list = this.request('GET', url).then((response) => {
        if (response.status !== 200) throw new Error(`discovery ${url}: HTTP ${response.status} ${JSON.stringify(response.body)}`);
        const map = new Map<string, ResourceInfo>();
        for (const r of response.body.resources as { name: string; kind: string; namespaced: boolean }[]) {
          if (!r.name.includes('/')) map.set(r.kind, { name: r.name, namespaced: r.namespaced });
        }
        return map;
      });
      this.#resources.set(apiVersion, list);
      list.catch(() => this.#resources.delete(apiVersion));
    }
    const info = (await list).get(kind);
    if (!info) throw new Error(`the apiserver does not serve kind ${kind} in ${apiVersion}`);
    return info;
  }

  /** The object's URL; a namespaced object without a namespace gets `defaultNamespace`. */
  async objectPath(object: Manifest, defaultNamespace?: string): Promise<string> {
    const info = await this.resource(object.apiVersion, object.kind);
    const base = object.apiVersion.includes('/') ? `/apis/${object.apiVersion}` : `/api/${object.apiVersion}`;
    if (!info.namespaced) return `${base}/${info.name}/${encodeURIComponent(object.metadata.name)}`;
    const namespace = object.metadata.namespace ?? defaultNamespace;
    if (!namespace) throw new Error(`${object.kind} ${object.metadata.name} has no namespace`);
    return `${base}/namespaces/${namespace}/${info.name}/${encodeURIComponent(object.metadata.name)}`;
  }

  /**
   * Server-side apply (force, strict field validation); with dryRun the apiserver runs every stage —
   * defaulting, validation, admission — and persists nothing. Throws with the apiserver's message.
   */
  async apply(object: Manifest, opts: { dryRun?: boolean; fieldManager?: string; defaultNamespace?: string } = {}): Promise<any> {
    const query = new URLSearchParams({ fieldManager: opts.fieldManager ?? 'coffer-tests', force: 'true', fieldValidation: 'Strict' });
    if (opts.dryRun) query.set('dryRun', 'All');
    const target = await this.objectPath(object, opts.defaultNamespace);
    const body =
      opts.defaultNamespace && !object.metadata.namespace && (await this.resource(object.apiVersion, object.kind)).namespaced
        ? { ...object, metadata: { ...object.metadata, namespace: opts.defaultNamespace } }
        : object;
    const response = await this.request('PATCH', `${target}?${query.toString()}`, body, 'application/apply-patch+yaml');
    if (response.status < 200 || response.status >= 300) {
      const message = typeof response.body === 'object' ? response.body?.message : String(response.body);
      throw new Error(
        `${opts.dryRun ? 'dry-run ' : ''}apply of ${object.kind} ${object.metadata.namespace ?? opts.defaultNamespace ?? ''}/${object.metadata.name}: HTTP ${response.status}: ${message}`,
      );
    }
    return response.body;
  }

  /** Deletes the object; a missing one is fine. */
  async delete(object: Manifest, defaultNamespace?: string): Promise<void> {
    const response = await this.request('DELETE', await this.objectPath(object, defaultNamespace));
    if (response.status !== 404 && (response.status < 200 || response.status >= 300)) {
      throw new Error(`delete of ${object.kind} ${object.metadata.name}: HTTP ${response.status}: ${JSON.stringify(response.body)}`);
    }
  }
}
