import { describe, expect, test } from 'vitest';
import { createEngine, renderTemplates } from '../../../src/operator/controllers/integration/template/liquid-engine.ts';

const engine = createEngine();
const CERT_A = '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----';
const CERT_B = '-----BEGIN CERTIFICATE-----\nBBBB\n-----END CERTIFICATE-----';
const KEY = '-----BEGIN EC PRIVATE KEY-----\nKKKK\n-----END EC PRIVATE KEY-----';
const secrets = {
  USER: 'app',
  PASSWORD: 'hunter2',
  HOST: 'db.internal',
  'db.port': '5432',
  CHAIN: `${CERT_A}\n${CERT_B}\n`,
  BUNDLE: `${KEY}\n${CERT_A}\n`,
  CONFIG: '{"region":"eu","replicas":3}',
  ENCODED: Buffer.from('plain text').toString('base64'),
};
const render = (template: string) => renderTemplates(engine, { out: template }, secrets);

describe('what templates can do', () => {
  test.each([
    ['variables and the secrets map', '{{ USER }}:{{ secrets["db.port"] }}', 'app:5432'],
    [
      'a connection string from three secrets',
      'postgres://{{ USER }}:{{ PASSWORD | url_encode }}@{{ HOST }}:{{ secrets["db.port"] }}/app',
      'postgres://app:hunter2@db.internal:5432/app',
    ],
    ['base64 both ways (sprig names)', '{{ USER | b64enc }} {{ ENCODED | b64dec }}', `${Buffer.from('app').toString('base64')} plain text`],
    ['JSON decode and encode', '{% assign c = CONFIG | from_json %}{{ c.region }}/{{ c.replicas }} {{ c | to_json }}', 'eu/3 {"region":"eu","replicas":3}'],
    ['YAML from JSON, and back', '{{ CONFIG | from_json | to_yaml }}', 'region: eu\nreplicas: 3\n'],
    ['a missing key with a default', '{{ NOT_THERE | default: "fallback" }}', 'fallback'],
    ['a missing key in an if', '{% if NOT_THERE %}yes{% else %}no{% endif %}', 'no'],
    ['PEM: the leaf, the chain, the private key', '{{ CHAIN | pem_leaf }}|{{ CHAIN | pem_chain }}|{{ BUNDLE | pem_private_key }}', `${CERT_A}\n|${CERT_B}\n|${KEY}\n`],
    ['PEM blocks of one type', '{{ BUNDLE | pem: "CERTIFICATE" }}', `${CERT_A}\n`],
    ['basic auth', '{{ USER | basic_auth: PASSWORD }}', Buffer.from('app:hunter2').toString('base64')],
    ['indent for YAML', 'key:{{ CHAIN | pem_leaf | nindent: 2 }}', `key:\n  -----BEGIN CERTIFICATE-----\n  AAAA\n  -----END CERTIFICATE-----\n`],
  ])('%s', async (_name, template, expected) => {
    expect(await render(template)).toEqual({ ok: true, data: { out: expected } });
  });

  test('a docker config for an image pull Secret', async () => {
    const answer = await render('{{ "registry.example.com" | dockerconfigjson: USER, PASSWORD }}');
    if (!answer.ok) throw new Error(answer.message);
    const config = JSON.parse(answer.data.out!) as unknown;
    expect(config).toEqual({ auths: { 'registry.example.com': { username: 'app', password: 'hunter2', auth: Buffer.from('app:hunter2').toString('base64') } } });
  });
});

describe('what templates cannot do: each is a failure naming the key, never a value', () => {
  test.each([
    ['a missing key', '{{ NOT_THERE }}', /^line 1, column 4: undefined variable 'NOT_THERE'$/],
    ['the prototype chain', '{{ USER.constructor }}', /^line 1, column 4: undefined variable 'USER\.constructor'$/],
    ['the process', '{{ process.env.HOME }}', /undefined variable 'process\.env\.HOME'/],
    ['files by include', '{% include "/etc/passwd" %}', /^line 1, column 1: unknown tag in '{% include/],
    ['files by render', '{% render "/etc/passwd" %}', /unknown tag in '{% render/],
    ['files by layout', '{% layout "/etc/passwd" %}', /unknown tag in '{% layout/],
    ['an unknown filter', '{{ USER | exec }}', /^line 1, column 1: unknown filter in '{{ USER \| exec }}'$/],
    ['a syntax error', '{% if %}', /^line 1, column 6: syntax error$/],
    ['a huge range', '{% for i in (1..100000000) %}x{% endfor %}', /allocates too much/],
    ['growth without bound', '{% assign s = PASSWORD %}{% for i in (1..200) %}{% assign s = s | b64enc %}{% endfor %}{{ s }}', /b64enc takes at most/],
    ['doubling by append', '{% assign s = PASSWORD %}{% for i in (1..60) %}{% assign s = s | append: s %}{% endfor %}{{ s }}', /allocates too much/],
    [
      'output over 1 MiB',
      '{% for i in (1..300) %}{{ CHAIN | pem_leaf | indent: 64 }}{{ CHAIN | pem_leaf | indent: 64 }}{{ CHAIN | pem_leaf | indent: 64 }}{% endfor %}{% for i in (1..3000) %}{{ CHAIN }}{{ CHAIN }}{{ CHAIN }}{{ CHAIN }}{% endfor %}',
      /exceeds 1048576 characters/,
    ],
    ['JSON that is not', '{{ PASSWORD | from_json }}', /^line 1, column 1: from_json: the value is not JSON$/],
    ['base64 that is not', '{{ HOST | b64dec }}', /^line 1, column 1: b64dec: the value is not base64$/],
    ['a YAML alias bomb', '{{ BOMB | from_yaml }}', /from_yaml: the value is not YAML/],
    ['no private key', '{{ CHAIN | pem_private_key }}', /holds no PRIVATE KEY block/],
    ['an absurd indent', '{{ USER | indent: 100000 }}', /indent: the width is a whole number from 0 to 64/],
    ['a required value missing', '{{ "" | required: "set DB_URL first" }}', /^line 1, column \d+: set DB_URL first$/],
  ])('%s', async (_name, template, message) => {
    const bomb = `a: &a ["x","x","x","x","x","x","x","x","x"]\n${Array.from(
      { length: 12 },
      (_, level) =>
        `l${level + 1}: &l${level + 1} [${Array(9)
          .fill(level === 0 ? '*a' : `*l${level}`)
          .join(',')}]`,
    ).join('\n')}\n`;
    const answer = await renderTemplates(engine, { out: template }, { ...secrets, BOMB: bomb });
    expect(answer.ok).toBe(false);
    const failure = answer as { key: string; message: string };
    expect(failure.key).toBe('out');
    expect(failure.message).toMatch(message);
    for (const value of ['hunter2', 'AAAA', '"region"']) expect(failure.message).not.toContain(value);
  });

  test('all or nothing: a failing key means no data at all', async () => {
    const answer = await renderTemplates(engine, { good: '{{ USER }}', bad: '{{ NOPE }}' }, secrets);
    expect(answer).toEqual({ ok: false, key: 'bad', message: expect.stringMatching(/NOPE/) as unknown });
  });
});

describe('a failure never quotes a value, nor anything made from one', () => {
  const SECRET = 'Zq7-very-secret-value';
  const planted = { A: SECRET, B: `x == "${SECRET}"`, EXPR: `${SECRET} | upcase`, LIST: '[1,2]', EMPTY: '' };
  /** Every form of the value a message could carry. */
  const forms = [SECRET, SECRET.toUpperCase(), SECRET.toLowerCase(), Buffer.from(SECRET).toString('base64'), encodeURIComponent(SECRET), 'very-secret'];

  test.each([
    ['a value used as a variable name', '{{ secrets[A] }}', /^line 1, column 4: undefined variable 'secrets\[A\]'$/],
    ['a value used as a name, then a property', '{{ secrets[A].field }}', /^line 1, column 4: undefined variable 'secrets\[A\]\.field'$/],
    [
      "a value as where_exp's expression",
      '{% assign l = LIST | from_json %}{{ l | where_exp: "i", A }}',
      /^in an expression a filter read from the data \(no position in the template\): undefined variable$/,
    ],
    ['a comparison from a value', '{% assign l = LIST | from_json %}{{ l | where_exp: "i", B }}', /^in an expression a filter read from the data/],
    ['a value with a filter as an expression', '{% assign l = LIST | from_json %}{{ l | find_exp: "i", EXPR }}', /^in an expression a filter read from the data/],
    ["a value as required's message", '{{ EMPTY | required: A }}', /^line 1, column \d+: a required value is missing$/],
    ['a value that is not JSON', '{{ A | from_json }}', /^line 1, column \d+: from_json: the value is not JSON$/],
    ['a value as a variable name, on line 3', 'first\n\n  {{ secrets[A] }}', /^line 3, column 6: undefined variable 'secrets\[A\]'$/],
  ])('%s', async (_name, template, message) => {
    const answer = await renderTemplates(engine, { 'app.conf': template }, planted);
    expect(answer).toEqual({ ok: false, key: 'app.conf', message: expect.stringMatching(message) as unknown });
    const { message: said } = answer as { message: string };
    for (const form of forms) expect(said).not.toContain(form);
  });
});
