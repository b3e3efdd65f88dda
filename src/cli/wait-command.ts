import type { BarrierAnswer, BarrierIntegration } from '../integrations/sync-barrier.ts';
import { parseDuration } from '../validation/duration.ts';
import type { CommandSpec } from './command.ts';
import { CliError, EXIT } from './exit-codes.ts';

/** The longest one call waits on the server (GET /api/v1/changes/wait); longer waits call again. */
const SERVER_MAX_WAIT_MS = 5 * 60_000;

export const waitCommand: CommandSpec = {
  name: 'wait',
  summary: 'wait until a write has reached the clusters (the revision barrier)',
  description:
    'Waits until every Integration that reads what the write with this revision changed reflects it: its Secret (or ConfigMap) ' +
    'holds the new data and, for Integrations with spec.reload, the consuming workloads were rolled. Every write answers its ' +
    'revision in the Coffer-Revision header. Exits 0 when reached, 6 when the timeout ran out first (naming what is pending).',
  flags: [
    { flags: '--revision <number>', description: "the revision to wait for (a write's Coffer-Revision header)" },
    { flags: '--server <url>', description: 'the Coffer API [COFFER_SERVER] (default http://127.0.0.1:8080)' },
    { flags: '--token <token>', description: "an access token that may read the project's integrations [COFFER_TOKEN]" },
    { flags: '--timeout <duration>', description: 'how long to wait at most, e.g. 30s, 5m (default 60s)' },
    { flags: '--json', description: "print the server's last answer as JSON" },
  ],
  examples: [
    'R=$(curl -s -D - -o /dev/null -X PATCH "$API/api/v3/secrets/raw/DB_PASSWORD" -H "Authorization: Bearer $COFFER_TOKEN" … | sed -n "s/^coffer-revision: //Ip" | tr -d "\\r")',
    'coffer wait --server "$API" --revision "$R" --timeout 2m && kubectl rollout restart deployment/web',
  ],
  run: waitForRevision,
};

async function waitForRevision(flags: Record<string, unknown>): Promise<void> {
  const revision = Number(flags.revision);
  if (typeof flags.revision !== 'string' || !/^\d+$/.test(flags.revision) || !Number.isSafeInteger(revision) || revision < 1) {
    throw new CliError('--revision is required: the revision to wait for (a whole number from 1, the Coffer-Revision header of a write)', EXIT.usage);
  }
  const timeoutMs = typeof flags.timeout === 'string' ? parseDuration(flags.timeout) : 60_000;
  if (timeoutMs === undefined) throw new CliError(`--timeout must be a duration such as 30s or 5m, not '${String(flags.timeout)}'`, EXIT.usage);
  const token = typeof flags.token === 'string' ? flags.token : process.env.COFFER_TOKEN;
  if (!token) throw new CliError('an access token is required: set COFFER_TOKEN (or --token)', EXIT.usage);
  const server = (typeof flags.server === 'string' ? flags.server : (process.env.COFFER_SERVER ?? 'http://127.0.0.1:8080')).replace(/\/+$/, '');
  const deadline = Date.now() + timeoutMs;
  let answer: BarrierAnswer;
  do {
    answer = await askServer(server, token, revision, Math.max(1, Math.min(deadline - Date.now(), SERVER_MAX_WAIT_MS)));
  } while (!answer.reached && Date.now() < deadline);
  process.stdout.write(flags.json ? `${JSON.stringify(answer, null, 2)}\n` : describe(answer, timeoutMs));
  if (!answer.reached) throw new CliError(`revision ${revision} has not reached every Integration within ${timeoutMs / 1000} s`, EXIT.timedOut);
}

async function askServer(server: string, token: string, revision: number, waitMs: number): Promise<BarrierAnswer> {
  const url = `${server}/api/v1/changes/wait?revision=${revision}&timeout=${waitMs}ms`;
  let response: Response;
  try {
    response = await fetch(url, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(waitMs + 30_000) });
  } catch (error) {
    throw new CliError(
      `cannot reach ${server}: ${error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error)}`,
      EXIT.failed,
    );
  }
  const body = (await response.json().catch(() => undefined)) as (BarrierAnswer & { message?: string }) | undefined;
  if (!response.ok || !body) throw new CliError(`${server} answered ${response.status}: ${body?.message ?? response.statusText}`, EXIT.failed);
  return body;
}

function describe(answer: BarrierAnswer, timeoutMs: number): string {
  const where = (integration: BarrierIntegration) => `${integration.cluster} ${integration.namespace}/${integration.name}`;
  const pending = answer.integrations.filter((integration) => integration.state === 'pending');
  const reached = answer.integrations.filter((integration) => integration.state === 'reached');
  const lines = answer.reached
    ? [
        `revision ${answer.revision} reached: ${reached.length} Integration${reached.length === 1 ? '' : 's'} reflect it${reached.length ? ` (${reached.map(where).join(', ')})` : ''}`,
      ]
    : [
        `revision ${answer.revision} not reached within ${timeoutMs / 1000} s; pending:`,
        ...pending.map(
          (integration) =>
            `  ${where(integration)} → ${integration.secretName ?? '?'}: synced at ${integration.syncedRevision ?? 'never'}${integration.message ? ` (${integration.message})` : ''}`,
        ),
      ];
  const paused = answer.integrations.filter((integration) => integration.state === 'paused');
  if (paused.length > 0) lines.push(`paused, not waited for: ${paused.map(where).join(', ')}`);
  return `${lines.join('\n')}\n`;
}
