import { Liquid, LiquidError, ParseError, RenderError, type Template, TokenizationError, UndefinedVariableError } from 'liquidjs';
import { FilterError, TEMPLATE_FILTERS } from './template-filters.ts';

/** What rendering a target's templates gave: every data key, or the first key that failed and why. */
export type RenderAnswer = { ok: true; data: Record<string, string> } | { ok: false; key: string; message: string };

/** The bounds of one render (all of a target's templates together). */
export const RENDER_LIMITS = {
  /** Liquid's own time check, between template nodes; the worker's hard stop is the renderer's. */
  renderMs: 1_000,
  /** Characters of one template. */
  templateLength: 65_536,
  /** Liquid's count of what loops, ranges and string filters allocate. */
  memory: 16_000_000,
  /** Characters of all output together: a Secret or ConfigMap holds at most 1 MiB. */
  outputLength: 1024 * 1024,
} as const;

/** Tags that reach other templates by name (files): there are none, so they are not offered at all. */
const FILE_TAGS = ['include', 'render', 'layout', 'block'];

/**
 * Liquid as namespace users may use it: no file system (no include, render or
 * layout; no template store), only the data's own properties (no prototype
 * chain: `x.constructor` is undefined), a missing variable is an error unless
 * `default` or `if` handles it, an unknown filter is an error, and time,
 * allocation and template size are bounded. It runs in a worker thread that
 * the renderer stops when a render takes too long.
 */
export function createEngine(): Liquid {
  const engine = new Liquid({
    templates: {},
    strictVariables: true,
    strictFilters: true,
    lenientIf: true,
    ownPropertyOnly: true,
    jsTruthy: false,
    cache: false,
    renderLimit: RENDER_LIMITS.renderMs,
    memoryLimit: RENDER_LIMITS.memory,
    parseLimit: RENDER_LIMITS.templateLength,
  });
  const tags = engine.tags as Record<string, unknown>;
  for (const tag of FILE_TAGS) delete tags[tag];
  for (const [name, filter] of Object.entries(TEMPLATE_FILTERS)) engine.registerFilter(name, filter);
  return engine;
}

/**
 * Renders each data template over the selected keys: every key is a variable
 * (`{{ DB_PASSWORD }}`) and an entry of `secrets` (`{{ secrets["db.password"] }}`
 * for names that are not identifiers). All or nothing: the first failure ends it.
 */
export async function renderTemplates(engine: Liquid, templates: Record<string, string>, secrets: Record<string, string>): Promise<RenderAnswer> {
  const scope = { ...secrets, secrets };
  const data: Record<string, string> = {};
  let length = 0;
  for (const [key, source] of Object.entries(templates)) {
    try {
      const parsed: Template[] = engine.parse(source);
      const output = String(await engine.render(parsed, scope));
      length += output.length;
      if (length > RENDER_LIMITS.outputLength) return { ok: false, key, message: `the rendered data exceeds ${RENDER_LIMITS.outputLength} characters` };
      data[key] = output;
    } catch (error) {
      return { ok: false, key, message: describeTemplateError(error) };
    }
  }
  return { ok: true, data };
}

/**
 * What went wrong, for the status. Errors about the template itself (syntax,
 * an unknown tag or filter, a missing variable) quote only the template and
 * name its line and column; a filter's FilterError and Liquid's limits say
 * what was wrong without the input. Anything else (a JavaScript error inside
 * a filter, whose message might quote its input: a secret value) is named
 * only by where it happened.
 */
export function describeTemplateError(error: unknown): string {
  if (error instanceof FilterError) return error.message;
  if (error instanceof ParseError || error instanceof TokenizationError || error instanceof UndefinedVariableError) return error.message;
  const cause = error instanceof RenderError ? (error as RenderError & { originalError?: unknown }).originalError : undefined;
  if (cause instanceof FilterError || isLimitError(cause)) return (error as LiquidError).message;
  const at = error instanceof LiquidError ? (/, line:\d+, col:\d+$/.exec(error.message)?.[0] ?? '') : '';
  return `a filter failed${at}`;
}

function isLimitError(cause: unknown): boolean {
  return cause instanceof Error && /^(memory alloc|template render) limit exceeded/.test(cause.message);
}
