/**
 * A bystander namespace's template renders while another namespace keeps CPU-heavy templates queued (each
 * stopped by Liquid's 1 s limit or the renderer's 2 s one). "one queue" is how renders were scheduled before
 * issue 26 (every namespace in one queue on one worker: the same renderer with one worker and one namespace);
 * "fair" is the shipped scheduling (two workers, a queue per namespace, one render per namespace at a time).
 * Prints the bystander's latency and appends it to bench/RESULTS.md.
 *
 *   node bench/templates.ts [--hostile 6] [--renders 20]
 */
import { parseArgs } from 'node:util';
import { TemplateRenderer } from '../src/operator/controllers/integration/template/template-renderer.ts';
import { appendResults, loadAverage, log, machine, ms, percentile, table } from './common.ts';

const { values: args } = parseArgs({ options: { hostile: { type: 'string', default: '6' }, renders: { type: 'string', default: '20' } } });
const HOSTILE_QUEUED = Number(args.hostile);
const RENDERS = Number(args.renders);

/** Many cheap nodes: runs until a limit stops it. */
const HEAVY = '{% for a in (1..400) %}{% for b in (1..400) %}{% for c in (1..400) %}{% endfor %}{% endfor %}{% endfor %}';
const SMALL = 'postgres://{{ USER }}:{{ PASSWORD | url_encode }}@db:5432/app';
const SECRETS = { USER: 'app', PASSWORD: 'p@ss word' };

async function bystanderLatencies(fair: boolean, renders: number): Promise<number[]> {
  const renderer = new TemplateRenderer(fair ? {} : { workers: 1 });
  const hostile = fair ? 'hostile' : 'shared';
  const bystander = fair ? 'bystander' : 'shared';
  let stopped = false;
  // the hostile namespace keeps HOSTILE_QUEUED heavy renders waiting or running
  const flood = Array.from({ length: HOSTILE_QUEUED }, async () => {
    while (!stopped) await renderer.render(hostile, { out: HEAVY }, {});
  });
  await renderer.render(bystander, { out: SMALL }, SECRETS); // warm: a worker started
  const latencies: number[] = [];
  for (let index = 0; index < renders; index++) {
    const started = performance.now();
    const answer = await renderer.render(bystander, { out: SMALL }, SECRETS);
    if (!answer.ok) throw new Error(answer.message);
    latencies.push(performance.now() - started);
  }
  stopped = true;
  await renderer.close();
  await Promise.all(flood);
  return latencies.sort((a, b) => a - b);
}

/** The bystander's renders with no one else rendering. */
async function quietLatencies(renders: number): Promise<number[]> {
  const renderer = new TemplateRenderer();
  await renderer.render('bystander', { out: SMALL }, SECRETS);
  const latencies: number[] = [];
  for (let index = 0; index < renders; index++) {
    const started = performance.now();
    await renderer.render('bystander', { out: SMALL }, SECRETS);
    latencies.push(performance.now() - started);
  }
  await renderer.close();
  return latencies.sort((a, b) => a - b);
}

async function main() {
  const quiet = await quietLatencies(RENDERS);
  log('fair scheduling under the flood');
  const fair = await bystanderLatencies(true, RENDERS);
  log('one queue under the flood');
  const shared = await bystanderLatencies(false, Math.max(3, Math.round(RENDERS / 4)));
  const row = (name: string, values: number[]) => [name, values.length, ms(percentile(values, 50)), ms(percentile(values, 99)), ms(values.at(-1)!)];
  const lines = [
    machine('none (in-process renderer)'),
    `Load average: ${loadAverage()}. Hostile namespace: ${HOSTILE_QUEUED} heavy renders kept queued.`,
    '',
    ...table(
      ['bystander render', 'renders', 'p50 ms', 'p99 ms', 'max ms'],
      [row('no flood (fair)', quiet), row('flood, fair (shipped)', fair), row('flood, one queue (before)', shared)],
    ),
  ];
  appendResults('Templates: a bystander namespace while another floods the renderer', lines);
}

await main();
