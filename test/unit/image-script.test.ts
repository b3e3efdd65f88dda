import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { expect, test } from 'vitest';

/**
 * scripts/image.sh (`npm run image`) where no engine can build (a PATH without docker, podman or buildah):
 * the dry run prints the plan and the exact commands, a real run says what to run elsewhere and exits 3.
 */
const SCRIPT = join(import.meta.dirname, '../../scripts/image.sh');
const run = (...args: string[]) => spawnSync('bash', [SCRIPT, ...args], { encoding: 'utf8', env: { ...process.env, PATH: '/usr/bin:/bin' } });

test('--dry-run prints the build plan: the context, the stages, the base image, and the build and load commands', () => {
  const { status, stdout } = run('--dry-run', '--load', 'kind');
  expect(status).toBe(0);
  expect(stdout).toContain('Build plan for ghcr.io/coffer-dev/coffer:0.1.0');
  expect(stdout).toMatch(/FROM \$\{NODE_IMAGE\} AS build/);
  expect(stdout).toContain('base image: node:24');
  expect(stdout).toMatch(/docker build --build-arg VERSION=0\.1\.0 -t ghcr\.io\/coffer-dev\/coffer:0\.1\.0 \//);
  expect(stdout).toContain('kind load docker-image ghcr.io/coffer-dev/coffer:0.1.0 --name kind');
  expect(stdout).toContain('engine: none can build here');
});

test('minikube and a tag of your own', () => {
  const { stdout } = run('--dry-run', '--load', 'minikube', '--tag', 'coffer:dev');
  expect(stdout).toContain('-t coffer:dev ');
  expect(stdout).toContain('minikube image load coffer:dev');
});

test('without an engine: exit 3 and the commands to run where one exists', () => {
  const { status, stderr } = run('--load', 'kind');
  expect(status).toBe(3);
  expect(stderr).toContain('no container engine can build here');
  expect(stderr).toContain('docker build --build-arg VERSION=0.1.0');
  expect(stderr).toContain('kind load docker-image');
});

test('a wrong argument: exit 2 naming it', () => {
  const { status, stderr } = run('--load', 'k3d');
  expect(status).toBe(2);
  expect(stderr).toContain("--load takes kind or minikube, not 'k3d'");
});
