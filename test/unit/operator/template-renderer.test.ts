import { afterAll, expect, test } from 'vitest';
import { TemplateRenderer } from '../../../src/operator/controllers/integration/template/template-renderer.ts';

const renderer = new TemplateRenderer({ timeoutMs: 300 });
afterAll(() => renderer.close());

test('renders in a worker thread', async () => {
  expect(await renderer.render({ a: '{{ X | b64enc }}' }, { X: 'x' })).toEqual({ ok: true, data: { a: 'eA==' } });
});

test('a render past the time limit stops the worker; the next render gets a new one', async () => {
  // many cheap nodes: Liquid's own limits do not trip within the renderer's 300 ms
  const slow = '{% for a in (1..300) %}{% for b in (1..300) %}{% for c in (1..300) %}{% endfor %}{% endfor %}{% endfor %}';
  expect(await renderer.render({ slow }, {})).toEqual({ ok: false, key: '', message: 'the template did not finish within 0.3 s' });
  expect(await renderer.render({ a: '{{ X }}' }, { X: 'after' })).toEqual({ ok: true, data: { a: 'after' } });
});

test('renders queue one after another and each gets its own answer', async () => {
  const answers = await Promise.all(Array.from({ length: 20 }, (_, index) => renderer.render({ n: '{{ N }}' }, { N: String(index) })));
  expect(answers.map((answer) => (answer.ok ? answer.data.n : answer.message))).toEqual(Array.from({ length: 20 }, (_, index) => String(index)));
});
