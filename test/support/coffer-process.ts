import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { freePorts } from './free-port.ts';

/** The built `coffer` binary, run as a user runs it. Requires `npm run build`. */
export const COFFER_BIN = join(import.meta.dirname, '../../bin/coffer.js');

export interface CofferProcess {
  process: ChildProcess;
  output: string[];
  api: string;
  probes: string;
}

/** Starts `coffer serve` on free ports with these settings; resolves once /readyz answers (or `probe`: /healthz for a process that is not meant to be ready). */
export async function startCoffer(env: Record<string, string>, readyTimeoutMs = 60_000, probe: '/readyz' | '/healthz' = '/readyz'): Promise<CofferProcess> {
  const [port, probePort] = (await freePorts(2)) as [number, number];
  const child = spawn(process.execPath, [COFFER_BIN, 'serve'], {
    env: { ...process.env, COFFER_PORT: String(port), COFFER_PROBE_PORT: String(probePort), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  child.stdout.on('data', (chunk) => output.push(String(chunk)));
  child.stderr.on('data', (chunk) => output.push(String(chunk)));
  const probes = `http://127.0.0.1:${probePort}`;
  const deadline = Date.now() + readyTimeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`coffer serve exited with ${child.exitCode}:\n${output.join('')}`);
    const ready = await fetch(`${probes}${probe}`)
      .then((response) => response.ok)
      .catch(() => false);
    if (ready) return { process: child, output, api: `http://127.0.0.1:${port}`, probes };
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  child.kill('SIGKILL');
  throw new Error(`coffer serve was not ready within ${readyTimeoutMs} ms:\n${output.join('')}`);
}

/** SIGTERM or SIGINT (graceful: Kubernetes stopping a pod, Ctrl-C) or SIGKILL; resolves with the exit code. */
export async function stopCoffer(server: CofferProcess, signal: 'SIGTERM' | 'SIGINT' | 'SIGKILL' = 'SIGTERM'): Promise<number | null> {
  if (server.process.exitCode !== null || server.process.signalCode !== null) return server.process.exitCode;
  const exited = new Promise<number | null>((resolve) => server.process.once('exit', (code) => resolve(code)));
  server.process.kill(signal);
  return exited;
}

export async function callCoffer(server: CofferProcess, method: string, path: string, token?: string, body?: unknown) {
  const response = await fetch(`${server.api}${path}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
}

/** The JSON log lines in `output` from chunk `from` on (a non-JSON line fails the caller's JSON.parse: the log is JSON only). */
export function logLines(output: string[], from = 0): { level: number; msg: string; time: number }[] {
  return output
    .slice(from)
    .join('')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { level: number; msg: string; time: number });
}

/** Stops a process as Ctrl-C does; resolves with its exit code and the log lines it wrote from the signal on. */
export async function interrupt(child: ChildProcess, output: string[]): Promise<{ code: number | null; lines: { level: number; msg: string }[] }> {
  const from = output.length;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGINT');
  const code = await exited;
  return { code, lines: logLines(output, from) };
}
