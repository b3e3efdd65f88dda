/**
 * What a process allocates, by the code that allocates it: V8's sampling heap profiler, taken over the inspector
 * protocol with the objects the garbage collector has freed kept in (a heap snapshot or `--heap-prof` shows only
 * what is still alive, and a cold start's cost is in what dies young).
 *
 *   sampleAllocations(port, seconds, file): the process was started with `--inspect=127.0.0.1:<port>`
 *   node bench/allocation-profile.ts <file.heapprofile> [top=40] [self]: the sampled bytes by function, inclusive
 *   (each function once per stack) or, with `self`, where the bytes were allocated
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

/** Samples the allocations of the process whose inspector listens on `port` for `seconds`, and writes the profile to `file`. */
export async function sampleAllocations(port: number, seconds: number, file: string): Promise<void> {
  const [target] = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as { webSocketDebuggerUrl: string }[];
  if (!target) throw new Error(`no inspector target on port ${port}`);
  const socket = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    socket.addEventListener('open', resolve);
    socket.addEventListener('error', reject);
  });
  let lastId = 0;
  const waiting = new Map<number, (message: { result?: unknown; error?: { message: string } }) => void>();
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown; error?: { message: string } };
    if (message.id === undefined) return;
    waiting.get(message.id)?.(message);
    waiting.delete(message.id);
  });
  const call = async (method: string, params: object = {}) => {
    const id = ++lastId;
    const answer = await new Promise<{ result?: unknown; error?: { message: string } }>((resolve) => {
      waiting.set(id, resolve);
      socket.send(JSON.stringify({ id, method, params }));
    });
    if (answer.error) throw new Error(`${method}: ${answer.error.message}`);
    return answer.result;
  };
  await call('HeapProfiler.startSampling', { samplingInterval: 16_384, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const { profile } = (await call('HeapProfiler.stopSampling')) as { profile: unknown };
  writeFileSync(file, JSON.stringify(profile));
  socket.close();
}

function summarise(file: string, top: number, self: boolean): void {
  const { head } = JSON.parse(readFileSync(file, 'utf8')) as { head: ProfileNode };
  const bytes = new Map<string, number>();
  let total = 0;
  const visit = (node: ProfileNode, stack: Set<string>) => {
    const { functionName, url, lineNumber } = node.callFrame;
    const name = `${functionName || '(anonymous)'} ${url.split('/').slice(-2).join('/')}:${lineNumber + 1}`;
    total += node.selfSize;
    const onStack = stack.has(name) ? stack : new Set([...stack, name]);
    for (const counted of self ? [name] : onStack) bytes.set(counted, (bytes.get(counted) ?? 0) + node.selfSize);
    for (const child of node.children) visit(child, onStack);
  };
  visit(head, new Set());
  // V8 scales each sample to the bytes it stands for: the total estimates what was allocated while sampling
  console.log(`${file}: ${(total / 2 ** 20).toFixed(0)} MiB allocated while sampling; by function, ${self ? 'where allocated' : 'inclusive'}:`);
  for (const [name, size] of [...bytes].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`  ${((100 * size) / total).toFixed(1).padStart(5)}%  ${name}`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [file, top, mode] = process.argv.slice(2);
  if (!file) throw new Error('usage: node bench/allocation-profile.ts <file.heapprofile> [top] [self]');
  summarise(file, Number(top ?? 40), mode === 'self');
}
