import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

/**
 * Writes where every run's time goes: one row per test file and project
 * (import + setup + tests and hooks, as vitest measures them), slowest
 * first, into .vitest-results/timings.md and timings.json, and prints the
 * slowest files with the run's wall time at the end. Files run in parallel,
 * so their times add up to more than the wall time.
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
    writeFileSync(path.join(this.#outputDir, 'timings.json'), `${JSON.stringify({ wallSeconds, files: rows }, null, 2)}\n`);
    writeFileSync(path.join(this.#outputDir, 'timings.md'), table(rows, wallSeconds));
    console.log(`\nTest time per file (slowest 15 of ${rows.length}; all in ${this.#outputDir}/timings.md):`);
    for (const row of rows.slice(0, 15)) console.log(`  ${row.seconds.toFixed(1).padStart(7)} s  ${row.project.padEnd(9)} ${row.file} (${row.tests} tests)`);
    console.log(`  wall time ${wallSeconds.toFixed(0)} s; files summed ${rows.reduce((sum, row) => sum + row.seconds, 0).toFixed(0)} s`);
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

function table(rows: TimingRow[], wallSeconds: number): string {
  const lines = ['# Test time per file', '', `Wall time ${wallSeconds.toFixed(0)} s, written ${new Date().toISOString()}.`, ''];
  lines.push('| seconds | project | file | tests | state |', '|---:|---|---|---:|---|');
  for (const row of rows) lines.push(`| ${row.seconds.toFixed(1)} | ${row.project} | ${row.file} | ${row.tests} | ${row.state} |`);
  return `${lines.join('\n')}\n`;
}
