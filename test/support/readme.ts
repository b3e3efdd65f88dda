import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The README's fenced blocks that an HTML comment marks for a test:
 *
 *   <!-- quickstart:run -->        a shell block the quick-start test runs, in order
 *   <!-- quickstart:output -->     the output the run block before it must print
 *   <!-- walkthrough:apply -->     a YAML block the cluster test applies
 */
export interface MarkedBlock {
  marker: string;
  language: string;
  code: string;
  /** 1-based line of the block's opening fence, for messages. */
  line: number;
}

export const README_PATH = join(import.meta.dirname, '../../README.md');

export function markedBlocks(text = readFileSync(README_PATH, 'utf8')): MarkedBlock[] {
  const lines = text.split('\n');
  const blocks: MarkedBlock[] = [];
  for (let index = 0; index < lines.length; index++) {
    const marker = /^<!--\s*([a-z]+:[a-z]+)\s*-->$/.exec(lines[index]!.trim())?.[1];
    if (!marker) continue;
    const fence = index + 1;
    const opening = /^```(\S*)\s*$/.exec(lines[fence] ?? '');
    if (!opening) throw new Error(`README.md:${index + 1}: <!-- ${marker} --> must stand right before a fenced block`);
    const end = lines.findIndex((line, at) => at > fence && line.trim() === '```');
    if (end < 0) throw new Error(`README.md:${fence + 1}: the block marked ${marker} is not closed`);
    blocks.push({ marker, language: opening[1]!, code: lines.slice(fence + 1, end).join('\n'), line: fence + 1 });
    index = end;
  }
  return blocks;
}
