import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

/**
 * Writes where every run's time goes: one row per test file and project
 * (import + setup + tests and hooks, as vitest measures them), slowest
 * first, with each project's total, into .vitest-results/timings.md and
 * timings.json, and prints the slowest files, the run's wall time and the
 * totals at the end. Files run in parallel (two at a time on 2 cores; the
 * cluster project's one at a time, last), so their times add up to more than
 * the wall time.
 */
export default class TimingReporter implements Reporter {
  #startedAt = performance.now();
  readonly #outputDir = '.vitest-results';

  onInit(): void {
    this.#startedAt = performance.now();
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const wallSeconds = (performance.now() - this.#startedAt) / 1000;
    const rows = testModules.map(toRow).sort((a, b) => b.seconds - a.seconds);
    mkdirSync(this.#outputDir, { recursive: true });
    const projects = byProject(rows);
    writeFileSync(path.join(this.#outputDir, 'timings.json'), `${JSON.stringify({ wallSeconds, projects, files: rows }, null, 2)}\n`);
    writeFileSync(path.join(this.#outputDir, 'timings.md'), table(rows, wallSeconds));
    console.log(`\nTest time per file (slowest 15 of ${rows.length}; all in ${this.#outputDir}/timings.md):`);
    for (const row of rows.slice(0, 15)) console.log(`  ${row.seconds.toFixed(1).padStart(7)} s  ${row.project.padEnd(9)} ${row.file} (${row.tests} tests)`);
    console.log(
      `  wall time ${wallSeconds.toFixed(0)} s; files summed ${sumOf(rows).toFixed(0)} s (${projects.map(({ project, seconds }) => `${project} ${seconds.toFixed(0)} s`).join(', ')})`,
    );
  }
}

interface TimingRow {
  project: string;
  file: string;
  seconds: number;
  tests: number;
  state: string;
}

function toRow(module: TestModule): TimingRow {
  const diagnostic = module.diagnostic();
  const milliseconds = diagnostic.duration + diagnostic.collectDuration + diagnostic.setupDuration;
  return {
    project: module.project.name,
    file: path.relative(process.cwd(), module.moduleId),
    seconds: milliseconds / 1000,
    tests: [...module.children.allTests()].length,
    state: module.state(),
  };
}

interface ProjectTotal {
  project: string;
  files: number;
  seconds: number;
}

const sumOf = (rows: readonly TimingRow[]) => rows.reduce((sum, row) => sum + row.seconds, 0);

/** Each project's files and their summed time, slowest project first (the cluster project's files run one at a time, after the others). */
function byProject(rows: readonly TimingRow[]): ProjectTotal[] {
  const names = [...new Set(rows.map((row) => row.project))];
  const totals = names.map((project) => {
    const own = rows.filter((row) => row.project === project);
    return { project, files: own.length, seconds: Number(sumOf(own).toFixed(1)) };
  });
  return totals.sort((a, b) => b.seconds - a.seconds);
}

function table(rows: TimingRow[], wallSeconds: number): string {
  const lines = ['# Test time per file', '', `Wall time ${wallSeconds.toFixed(0)} s, files summed ${sumOf(rows).toFixed(0)} s, written ${new Date().toISOString()}.`, ''];
  lines.push('| project | files | seconds summed |', '|---|---:|---:|');
  for (const total of byProject(rows)) lines.push(`| ${total.project} | ${total.files} | ${total.seconds.toFixed(1)} |`);
  lines.push('');
  lines.push('| seconds | project | file | tests | state |', '|---:|---|---|---:|---|');
  for (const row of rows) lines.push(`| ${row.seconds.toFixed(1)} | ${row.project} | ${row.file} | ${row.tests} | ${row.state} |`);
  return `${lines.join('\n')}\n`;
}
