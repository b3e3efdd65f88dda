import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { loadConsoleFiles } from '../../src/http/console/console-files.ts';
import { bootstrap, startTestApp, type TestApp } from '../support/test-app.ts';

export const ADMIN = { email: 'admin@example.com', password: 'correct horse battery' };

/** A test app serving the built console (`npm run build`), bootstrapped, listening on 127.0.0.1. */
export async function startConsoleServer() {
  const files = await loadConsoleFiles();
  if (!files) throw new Error('dist/console is missing: run `npm run build` before the console tests');
  const app: TestApp = await startTestApp({ console: files });
  const admin = await bootstrap(app);
  await app.app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.app.server.address() as AddressInfo;
  return { app, admin, files, origin: `http://127.0.0.1:${port}` };
}

/** One headless chromium per test file (root needs --no-sandbox in a container). */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: process.env.COFFER_CHROMIUM ?? '/usr/bin/chromium', headless: true, args: ['--no-sandbox'] });
}
