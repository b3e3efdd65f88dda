/**
 * Summarises a V8 .cpuprofile (from `node --cpu-prof`): self time by function and by package/file.
 *   node bench/profile-summary.ts <file.cpuprofile> [top=25]
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

const [file, topArg] = process.argv.slice(2);
if (!file) throw new Error('usage: node bench/profile-summary.ts <file.cpuprofile> [top]');
const top = Number(topArg ?? 25);
const profile = JSON.parse(readFileSync(file, 'utf8')) as { nodes: ProfileNode[]; startTime: number; endTime: number; samples: number[] };
const total = profile.samples.length;

function place(url: string): string {
  if (!url) return '(native/V8)';
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (url.startsWith('node:')) return url;
  const dist = url.indexOf('/dist/');
  return dist >= 0 ? `coffer ${url.slice(dist + 6)}` : url;
}

const byFunction = new Map<string, number>();
const byPlace = new Map<string, number>();
for (const node of profile.nodes) {
  const hits = node.hitCount ?? 0;
  if (!hits) continue;
  const where = place(node.callFrame.url);
  const name = `${node.callFrame.functionName || '(anonymous)'} — ${where}${node.callFrame.url ? `:${node.callFrame.lineNumber + 1}` : ''}`;
  byFunction.set(name, (byFunction.get(name) ?? 0) + hits);
  byPlace.set(where, (byPlace.get(where) ?? 0) + hits);
}
const pct = (hits: number) => `${((100 * hits) / total).toFixed(1)}%`;
const seconds = (profile.endTime - profile.startTime) / 1e6;
console.log(`${file}: ${total} samples over ${seconds.toFixed(1)} s`);
console.log('\nself time by package / file:');
for (const [where, hits] of [...byPlace].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(hits).padStart(6)}  ${where}`);
console.log('\nself time by function:');
for (const [name, hits] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(hits).padStart(6)}  ${name}`);
