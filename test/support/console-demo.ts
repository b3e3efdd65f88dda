import type { Page } from 'playwright-core';
import { callCoffer, type CofferProcess } from './coffer-process.ts';

/** The first user of a `coffer serve` the console scripts start (bench/console.ts, scripts/console-screenshots.ts). */
export const DEMO_ADMIN = { email: 'admin@example.com', password: 'correct horse battery' };

/** The flags this machine's chromium needs as root, with no network beyond loopback. */
export const CHROMIUM_FLAGS = ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

async function call(server: CofferProcess, method: string, path: string, token: string, body?: unknown) {
  const answer = await callCoffer(server, method, path, token, body);
  if (answer.status !== 200) throw new Error(`${method} ${path} → ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body;
}

/** Bootstraps the server and makes a project whose dev environment holds `count` secrets (and a few in prod). */
export async function seedProject(server: CofferProcess, projectName: string, count: number) {
  const boot = await callCoffer(server, 'POST', '/api/v1/admin/bootstrap', undefined, { ...DEMO_ADMIN, organization: 'Acme' });
  if (boot.status !== 200) throw new Error(`bootstrap → ${boot.status}`);
  const token = boot.body.identity.credentials.token as string;
  const { project } = await call(server, 'POST', '/api/v2/workspace', token, { projectName });
  const place = { projectId: project.id, secretPath: '/' };
  const keys = Array.from({ length: count }, (_, index) => `SERVICE_${String(index).padStart(4, '0')}_URL`);
  for (let start = 0; start < keys.length; start += 100) {
    const secrets = keys
      .slice(start, start + 100)
      .map((secretKey) => ({ secretKey, secretValue: `https://${secretKey.toLowerCase()}.internal`, secretComment: 'endpoint' }));
    await call(server, 'POST', '/api/v4/secrets/batch', token, { ...place, environment: 'dev', secrets });
  }
  await call(server, 'POST', '/api/v4/secrets/batch', token, {
    ...place,
    environment: 'prod',
    secrets: keys.slice(0, 3).map((secretKey) => ({ secretKey, secretValue: `https://${secretKey.toLowerCase()}.prod.internal` })),
  });
  await call(server, 'POST', '/api/v1/folders', token, { workspaceId: project.id, environment: 'dev', path: '/', name: 'payments' });
  return { token, projectId: project.id as string, orgId: boot.body.organization.id as string };
}

/** Signs in through the console's form. */
export async function signIn(page: Page, origin: string): Promise<void> {
  await page.goto(`${origin}/`);
  await page.getByLabel('Email').fill(DEMO_ADMIN.email);
  await page.getByLabel('Password').fill(DEMO_ADMIN.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Projects' }).waitFor();
}
