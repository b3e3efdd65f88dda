/**
 * What one hostile path glob costs the server: the issue-26 glob (`/**\/@(*|*)`
 * repeated, ending in `!`) matched against a path 29 folders deep, as every
 * change is matched for a subscription and every check for a role. Before:
 * picomatch's JavaScript regex (when picomatch is still installed; only up to
 * 7 repetitions, since 8 hold the process ~40 s and more for minutes to hours).
 * After: src/patterns/ (RE2), up to the bound and past it (refused). The event
 * loop is blocked for as long as one match takes: that time is every other
 * request's added latency. Appends to bench/RESULTS.md.
 *
 *   node bench/patterns.ts
 */
import { compilePathGlob, PatternError } from '../src/patterns/patterns.ts';
import { appendResults, loadAverage, log, machine, ms, table } from './common.ts';

const DEEP = `/${Array.from({ length: 29 }, (_, index) => `folder-${index}`).join('/')}`;
const hostile = (repetitions: number) => `${'/**/@(*|*)'.repeat(repetitions)}!`;

type Match = (path: string) => boolean;

async function picomatchOrUndefined(): Promise<((glob: string) => Match) | undefined> {
  try {
    // Named through a variable: picomatch is no dependency of ours (only, for now, of a dev tool), so it has no types here.
    const moduleName = 'picomatch';
    const module = (await import(moduleName)) as { default: (glob: string, options: object) => Match };
    return (glob) => module.default(glob, { dot: true });
  } catch {
    return undefined;
  }
}

function time(run: () => void): number {
  const start = performance.now();
  run();
  return performance.now() - start;
}

async function main() {
  const picomatch = await picomatchOrUndefined();
  const rows: (string | number)[][] = [];
  for (const repetitions of [4, 5, 6, 7, 8, 9, 10, 11, 12, 100]) {
    const glob = hostile(repetitions);
    const before =
      picomatch && repetitions <= 7
        ? `${ms(time(() => picomatch(glob)(DEEP)))} ms`
        : picomatch
          ? 'not run (each repetition multiplies the time 5–8×)'
          : 'picomatch not installed';
    let after: string;
    try {
      let matcher: Match = () => false;
      const compile = time(() => (matcher = compilePathGlob(glob).matches));
      const match = time(() => matcher(DEEP));
      after = `compile ${ms(compile)} ms, match ${ms(match)} ms`;
    } catch (error) {
      if (!(error instanceof PatternError)) throw error;
      after = `refused (422): ${error.message}`;
    }
    log(`${repetitions} repetitions: before ${before}; after ${after}`);
    rows.push([repetitions, before, after]);
  }
  appendResults('Hostile path glob, one match against a path 29 folders deep (issue 26)', [
    `Machine: ${machine('no database')}; load ${loadAverage()}.`,
    '',
    ...table(['repetitions of `/**/@(*|*)`, then `!`', 'before: picomatch (event loop blocked)', 'after: src/patterns/ (RE2)'], rows),
  ]);
}

await main();
