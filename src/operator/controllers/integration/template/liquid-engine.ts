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
  // no prototype: a data key named `__proto__` or `constructor` is a key like any other
  const data = Object.create(null) as Record<string, string>;
  let length = 0;
  for (const [key, source] of Object.entries(templates)) {
    try {
      const parsed: Template[] = engine.parse(source);
      const output = String(await engine.render(parsed, scope));
      length += output.length;
      if (length > RENDER_LIMITS.outputLength) return { ok: false, key, message: `the rendered data exceeds ${RENDER_LIMITS.outputLength} characters` };
      data[key] = output;
    } catch (error) {
      return { ok: false, key, message: describeTemplateError(error, source) };
    }
  }
  return { ok: true, data };
}

/** Longest piece of the template quoted in a message. */
const QUOTED_TEMPLATE_MAX = 80;

/**
 * What went wrong, for the status, the Event and the integration record:
 * read by people who may not read the Secret. Built only from the kind of
 * error, where it is in the template (line and column) and the template's own
 * text there, never from Liquid's message: that quotes names and expressions
 * evaluated at render time (`secrets[A]` names the variable by A's value;
 * where_exp parses a value as an expression). A position is given only when
 * the error's token lies in this template's source; an error inside text a
 * filter took from the data has none. A filter's FilterError says what was
 * wrong without its input (filters build those messages so).
 */
export function describeTemplateError(error: unknown, source: string): string {
  if (error instanceof FilterError) return error.message;
  const cause = error instanceof RenderError ? (error as RenderError & { originalError?: unknown }).originalError : undefined;
  const token = ownToken(error, source);
  const at = token ? `line ${lineOf(source, token.begin)}, column ${columnOf(source, token.begin)}: ` : error instanceof LiquidError ? IN_DATA : '';
  if (cause instanceof FilterError) return `${at}${cause.message}`;
  return `${at}${kindOf(error, cause, token ? quoted(source, token) : '')}`;
}

const IN_DATA = 'in an expression a filter read from the data (no position in the template): ';

function kindOf(error: unknown, cause: unknown, text: string): string {
  const limit = limitOf(cause ?? error);
  if (limit === 'memory') return 'the template allocates too much (loops, ranges or strings)';
  if (limit === 'render') return 'the template runs too long';
  if (limit === 'parse') return `the template is longer than ${RENDER_LIMITS.templateLength} characters`;
  if (error instanceof UndefinedVariableError) return `undefined variable${text}`;
  if (error instanceof ParseError && /^undefined filter/.test(originalMessage(error))) return `unknown filter in${text}`;
  if (error instanceof ParseError && /^tag .* not found/.test(originalMessage(error))) return `unknown tag in${text}`;
  if (error instanceof ParseError || error instanceof TokenizationError) return `syntax error${text ? ` in${text}` : ''}`;
  return `a filter failed${text ? ` in${text}` : ''}`;
}

/** The error's token when it lies in this template's source (not in text a filter took from the data). */
function ownToken(error: unknown, source: string): { begin: number; end: number } | undefined {
  const token = error instanceof LiquidError ? error.token : undefined;
  if (!token || token.input !== source || token.begin < 0 || token.end > source.length || token.begin > token.end) return undefined;
  return token;
}

const lineOf = (source: string, offset: number) => source.slice(0, offset).split('\n').length;
const columnOf = (source: string, offset: number) => offset - source.lastIndexOf('\n', offset - 1);

/** The template's own text at the token, quoted and shortened (" 'secrets[A]'"); '' when blank. */
function quoted(source: string, token: { begin: number; end: number }): string {
  const piece = source.slice(token.begin, token.end).trim();
  if (piece === '') return '';
  return ` '${piece.length > QUOTED_TEMPLATE_MAX ? `${piece.slice(0, QUOTED_TEMPLATE_MAX)}…` : piece}'`;
}

function originalMessage(error: LiquidError): string {
  const original = (error as LiquidError & { originalError?: unknown }).originalError;
  return original instanceof Error ? original.message : '';
}

/** Which of Liquid's limits an error is (its messages are fixed texts). */
function limitOf(error: unknown): 'memory' | 'render' | 'parse' | undefined {
  const match = error instanceof Error ? /^(memory alloc|template render|parse length) limit exceeded/.exec(error.message) : null;
  return match ? ({ 'memory alloc': 'memory', 'template render': 'render', 'parse length': 'parse' } as const)[match[1] as 'memory alloc'] : undefined;
}
