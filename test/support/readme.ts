import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * The README's fenced blocks that an HTML comment marks for a test:
 *
 *   <!-- quickstart:run -->        a shell block the quick-start test runs, in order
 *   <!-- quickstart:output -->     the output the run block before it must print
 *   <!-- walkthrough:apply -->     a YAML block the cluster test applies
 *   <!-- walkthrough:import -->    the SecretImport YAML block the cluster test applies after it
 *   <!-- readme:run -->            a shell block the examples test runs after the quick start, in order
 *   <!-- readme:output -->         the output of the run block before it (`…` stands for any text)
 *   <!-- readme:node -->           a JavaScript block saved as the `app.mjs` a run block starts
 *   <!-- readme:webhooks -->  the webhook signature recipe, run against real deliveries (test/api/webhooks.test.ts,
 *                             test/api/audit-log-streams.test.ts)
 *
 * A marked block may be indented (inside a list item); the indentation is taken off its code.
 */
export interface MarkedBlock {
  marker: string;
  language: string;
  code: string;
  /** 1-based line of the block's opening fence, for messages. */
  line: number;
}

export const README_PATH = join(import.meta.dirname, '../../README.md');

export function markedBlocks(text = readFileSync(README_PATH, 'utf8')): MarkedBlock[] {
  const lines = text.split('\n');
  const blocks: MarkedBlock[] = [];
  for (let index = 0; index < lines.length; index++) {
    const marker = /^<!--\s*([a-z]+:[a-z]+)\s*-->$/.exec(lines[index]!.trim())?.[1];
    if (!marker) continue;
    const fence = index + 1;
    const opening = /^(\s*)```(\S*)\s*$/.exec(lines[fence] ?? '');
    if (!opening) throw new Error(`README.md:${index + 1}: <!-- ${marker} --> must stand right before a fenced block`);
    const end = lines.findIndex((line, at) => at > fence && line.trim() === '```');
    if (end < 0) throw new Error(`README.md:${fence + 1}: the block marked ${marker} is not closed`);
    const indent = opening[1]!.length;
    const code = lines.slice(fence + 1, end).map((line) => line.slice(Math.min(indent, line.length - line.trimStart().length)));
    blocks.push({ marker, language: opening[2]!, code: code.join('\n'), line: fence + 1 });
    index = end;
  }
  return blocks;
}

/** The text block marked `<marker>` right after `block` in `blocks`, if there is one. */
export function outputAfter(blocks: MarkedBlock[], block: MarkedBlock, marker: string): string | undefined {
  const next = blocks[blocks.indexOf(block) + 1];
  return next?.marker === marker ? next.code.trimEnd() : undefined;
}

/** Whether `printed` is what the README shows, where `…` in the README stands for any text on its line. */
export function matchesShown(printed: string, shown: string): boolean {
  const pattern = shown
    .split('…')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('[^\n]*');
  return new RegExp(`^${pattern}$`).test(printed);
}

/** Runs `script` as a reader's shell would, with -e and pipefail: a failing command fails the run. */
export function bash(script: string, cwd: string, env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-euo', 'pipefail', '-c', script], { cwd, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The README's signature recipe (`readme:webhooks`) as a receiver would paste it: its `verify` function. */
export type VerifyRecipe = (secretKey: string, header: string, rawBody: string, toleranceMs?: number) => boolean;

export async function signatureRecipe(): Promise<VerifyRecipe> {
  const dir = mkdtempSync(join(tmpdir(), 'coffer-signature-recipe-'));
  try {
    const recipe = markedBlocks().find((block) => block.marker === 'readme:webhooks')!;
    writeFileSync(join(dir, 'verify.mjs'), `${recipe.code}\nexport { verify };\n`);
    return ((await import(pathToFileURL(join(dir, 'verify.mjs')).href)) as { verify: VerifyRecipe }).verify;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
