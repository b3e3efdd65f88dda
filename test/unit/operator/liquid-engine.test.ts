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
    ['a missing key', '{{ NOT_THERE }}', /undefined variable: NOT_THERE, line:1, col:4/],
    ['the prototype chain', '{{ USER.constructor }}', /undefined variable: USER\.constructor/],
    ['the process', '{{ process.env.HOME }}', /undefined variable: process/],
    ['files by include', '{% include "/etc/passwd" %}', /tag "include" not found/],
    ['files by render', '{% render "/etc/passwd" %}', /tag "render" not found/],
    ['files by layout', '{% layout "/etc/passwd" %}', /tag "layout" not found/],
    ['an unknown filter', '{{ USER | exec }}', /undefined filter: exec/],
    ['a syntax error', '{% if %}', /invalid value expression/],
    ['a huge range', '{% for i in (1..100000000) %}x{% endfor %}', /limit exceeded/],
    ['growth without bound', '{% assign s = PASSWORD %}{% for i in (1..200) %}{% assign s = s | b64enc %}{% endfor %}{{ s }}', /b64enc takes at most/],
    ['doubling by append', '{% assign s = PASSWORD %}{% for i in (1..60) %}{% assign s = s | append: s %}{% endfor %}{{ s }}', /limit exceeded/],
    [
      'output over 1 MiB',
      '{% for i in (1..300) %}{{ CHAIN | pem_leaf | indent: 64 }}{{ CHAIN | pem_leaf | indent: 64 }}{{ CHAIN | pem_leaf | indent: 64 }}{% endfor %}{% for i in (1..3000) %}{{ CHAIN }}{{ CHAIN }}{{ CHAIN }}{{ CHAIN }}{% endfor %}',
      /exceeds 1048576 characters/,
    ],
    ['JSON that is not', '{{ PASSWORD | from_json }}', /^from_json: the value is not JSON/],
    ['base64 that is not', '{{ HOST | b64dec }}', /^b64dec: the value is not base64/],
    ['a YAML alias bomb', '{{ BOMB | from_yaml }}', /from_yaml: the value is not YAML/],
    ['no private key', '{{ CHAIN | pem_private_key }}', /holds no PRIVATE KEY block/],
    ['an absurd indent', '{{ USER | indent: 100000 }}', /indent: the width is a whole number from 0 to 64/],
    ['a required value missing', '{{ "" | required: "set DB_URL first" }}', /^set DB_URL first/],
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
