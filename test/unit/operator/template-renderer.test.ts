import { afterAll, expect, test } from 'vitest';
import type { RenderAnswer } from '../../../src/operator/controllers/integration/template/liquid-engine.ts';
import { TemplateRenderer } from '../../../src/operator/controllers/integration/template/template-renderer.ts';

const renderer = new TemplateRenderer({ timeoutMs: 300 });
afterAll(() => renderer.close());

/** Many cheap nodes: Liquid's own limits do not trip within the renderer's 300 ms; the renderer stops it. */
const SLOW = '{% for a in (1..300) %}{% for b in (1..300) %}{% for c in (1..300) %}{% endfor %}{% endfor %}{% endfor %}';

test('renders in a worker thread', async () => {
  expect(await renderer.render('ns', { a: '{{ X | b64enc }}' }, { X: 'x' })).toEqual({ ok: true, data: { a: 'eA==' } });
});

test('a render past the time limit stops the worker; the next render gets a new one', async () => {
  expect(await renderer.render('ns', { slow: SLOW }, {})).toEqual({ ok: false, key: '', message: 'the template did not finish within 0.3 s' });
  expect(await renderer.render('ns', { a: '{{ X }}' }, { X: 'after' })).toEqual({ ok: true, data: { a: 'after' } });
});

test('renders queue one after another and each gets its own answer', async () => {
  const answers = await Promise.all(Array.from({ length: 20 }, (_, index) => renderer.render(`ns-${index % 3}`, { n: '{{ N }}' }, { N: String(index) })));
  expect(answers.map((answer) => (answer.ok ? answer.data.n : answer.message))).toEqual(Array.from({ length: 20 }, (_, index) => String(index)));
});

/** Asks for the renders in this order (all at once) and gives the order their answers came in. */
async function completionOrder(pool: TemplateRenderer, renders: [label: string, namespace: string, template: string][]): Promise<string[]> {
  const order: string[] = [];
  await Promise.all(
    renders.map(([label, namespace, template]) =>
      pool.render(namespace, { out: template }, {}).then((answer: RenderAnswer) => {
        order.push(label);
        return answer;
      }),
    ),
  );
  return order;
}

test('one worker: a namespace with slow renders queued takes turns with another namespace, not the worker', async () => {
  const pool = new TemplateRenderer({ timeoutMs: 300, workers: 1 });
  try {
    const order = await completionOrder(pool, [
      ['slow-1', 'noisy', SLOW],
      ['slow-2', 'noisy', SLOW],
      ['slow-3', 'noisy', SLOW],
      ['quiet', 'quiet', 'fast'],
    ]);
    // before: one queue for all (slow-1, slow-2, slow-3, quiet)
    expect(order).toEqual(['slow-1', 'quiet', 'slow-2', 'slow-3']);
  } finally {
    await pool.close();
  }
});

test('two workers: a namespace holds at most one, so another namespace renders beside its slow renders', async () => {
  const pool = new TemplateRenderer({ timeoutMs: 300, workers: 2 });
  try {
    const order = await completionOrder(pool, [
      ['slow-1', 'noisy', SLOW],
      ['slow-2', 'noisy', SLOW],
      ['slow-3', 'noisy', SLOW],
      ['quiet', 'quiet', 'fast'],
    ]);
    // the quiet render started beside slow-1 (the noisy namespace's others wait for it)
    expect(order.indexOf('quiet')).toBeLessThan(order.indexOf('slow-2'));
    expect(order.filter((label) => label !== 'quiet')).toEqual(['slow-1', 'slow-2', 'slow-3']);
  } finally {
    await pool.close();
  }
});

test('closing answers the renders still waiting', async () => {
  const pool = new TemplateRenderer({ timeoutMs: 5_000, workers: 1 });
  const running = pool.render('a', { out: SLOW }, {});
  const waiting = pool.render('a', { out: 'x' }, {});
  await pool.close();
  expect(await waiting).toEqual({ ok: false, key: '', message: 'the template was not rendered: the operator is stopping' });
  expect((await running).ok).toBe(false);
});
