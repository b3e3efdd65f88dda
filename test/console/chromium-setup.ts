import { execFileSync } from 'node:child_process';
import path from 'node:path';

/** The console tests' browser: Debian's chromium, installed by scripts/chromium.sh when missing (fails loudly otherwise). */
export default function setup(): void {
  const script = path.resolve(import.meta.dirname, '../../scripts/chromium.sh');
  try {
    execFileSync('bash', [script], { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (error) {
    const stderr = String((error as { stderr?: Buffer }).stderr ?? '').trim();
    throw new Error(`scripts/chromium.sh could not provide /usr/bin/chromium, so the console tests cannot run:\n${stderr}`, { cause: error });
  }
}
