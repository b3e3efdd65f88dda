import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core on the page's current screen: no serious or critical violation. */
export async function expectAccessible(page: Page, screen: string): Promise<void> {
  // evaluated as source: the CSP allows no inline script, but a page.evaluate runs outside it
  if (!(await page.evaluate('"axe" in window'))) await page.evaluate(AXE_SOURCE);
  const violations: { id: string; impact: string; nodes: unknown[] }[] = await page.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((result) =>
    result.violations.map((violation) => ({ id: violation.id, impact: violation.impact, nodes: violation.nodes.map((node) => node.target) })))`);
  expect(
    violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical'),
    screen,
  ).toEqual([]);
}

/** Records the body of every /api answer the page loads (a stream's body once it ends), to look for values in. */
export function recordApiAnswers(page: Page): { url: string; body: string }[] {
  const answers: { url: string; body: string }[] = [];
  page.on('response', (response) => {
    if (!new URL(response.url()).pathname.startsWith('/api/')) return;
    void response.text().then(
      (body) => answers.push({ url: response.url(), body }),
      () => undefined,
    );
  });
  return answers;
}

/** The answers that hold one of `values` (as is, or escaped in JSON). */
export function answersHolding(answers: { url: string; body: string }[], values: string[]): string[] {
  return answers
    .filter((answer) => values.some((value) => answer.body.includes(value) || answer.body.includes(JSON.stringify(value).slice(1, -1))))
    .map((answer) => answer.url);
}

/** The values that appear anywhere in the page's document. */
export async function valuesInPage(page: Page, values: string[]): Promise<string[]> {
  const html: string = await page.evaluate('document.documentElement.outerHTML');
  return values.filter((value) => html.includes(value));
}

/** Signs in through the console's form (the page shows it for any address until signed in). */
export async function signInThroughForm(page: Page, user: { email: string; password: string }): Promise<void> {
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** On the secrets screen: edits `key` to `value`, saves, and opens the Where it goes screen of `key`. */
export async function saveAndFollow(page: Page, key: string, value: string): Promise<void> {
  await page.getByRole('button', { name: `Edit ${key}` }).click();
  const edit = page.getByRole('form', { name: `Edit ${key}` });
  await edit.getByLabel('New value (empty keeps it)').fill(value);
  await edit.getByRole('button', { name: 'Save' }).click();
  await page.getByText(`Saved ${key}`).waitFor();
  await page.getByRole('button', { name: `Where ${key} goes` }).click();
}
