/**
 * An earlier commit, checked out into a temporary detached git worktree and built there, for the benches that
 * measure it beside this checkout (bench:compare, bench:scale --commit).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { log, REPO } from './common.ts';

export interface CommitCheckout {
  dir: string;
  sha: string;
  /** What differs from a build of this checkout (dependencies, type errors), for the result's notes. */
  notes: string[];
  remove(): void;
}

const git = (...gitArgs: string[]) => execFileSync('git', gitArgs, { cwd: REPO, encoding: 'utf8' }).trim();

/** `commit` in a temporary detached worktree, built with this checkout's TypeScript and node_modules (symlinked). */
export function checkOutCommit(commit: string): CommitCheckout {
  const sha = git('rev-parse', '--short=12', `${commit}^{commit}`);
  const dir = mkdtempSync(join(os.tmpdir(), `coffer-base-${sha}-`));
  git('worktree', 'add', '--detach', dir, sha);
  const remove = () => {
    try {
      git('worktree', 'remove', '--force', dir);
    } catch {
      rmSync(dir, { recursive: true, force: true });
      git('worktree', 'prune');
    }
  };
  try {
    const notes: string[] = [];
    symlinkSync(realpathSync(join(REPO, 'node_modules')), join(dir, 'node_modules'));
    const differences = dependencyDifferences(join(dir, 'package.json'), join(REPO, 'package.json'));
    if (differences.length > 0) {
      notes.push(`the base's package.json names other dependencies than this checkout's (${differences.join(', ')}); it ran with this checkout's node_modules`);
      log(notes.at(-1)!);
    }
    log(`building ${sha} in ${dir}`);
    try {
      execFileSync(join(REPO, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.build.json'], { cwd: dir, stdio: 'pipe' });
    } catch (error) {
      // tsc emits despite type errors (newer @types than the base was written against); only a missing build stops
      if (!existsSync(join(dir, 'dist', 'main.js'))) throw error;
      notes.push(`the base built with type errors against this checkout's node_modules (emitted all the same)`);
      log(notes.at(-1)!);
    }
    return { dir, sha, notes, remove };
  } catch (error) {
    remove();
    throw error;
  }
}

/** Dependencies whose name or range differs between two package.json files, as `name base→head`. */
function dependencyDifferences(basePath: string, headPath: string): string[] {
  const deps = (path: string): Record<string, string> => {
    const json = JSON.parse(readFileSync(path, 'utf8'));
    return { ...json.dependencies, ...json.devDependencies };
  };
  const [base, head] = [deps(basePath), deps(headPath)];
  return [...new Set([...Object.keys(base), ...Object.keys(head)])]
    .filter((name) => base[name] !== head[name])
    .sort()
    .map((name) => `${name} ${base[name] ?? '—'}→${head[name] ?? '—'}`);
}
