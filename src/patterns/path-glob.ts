import { RE2JS } from 're2js';
import { PatternBudget } from './pattern-budget.ts';
import { PatternError } from './pattern-limits.ts';

/** A secret-path glob as RE2 source, with what a subscription needs to know of it. */
export interface TranslatedPathGlob {
  /** RE2 source matching the whole path (anchors included). */
  source: string;
  /** A leading `!`: the pattern matches every path the rest does not. */
  negated: boolean;
  /** False for a plain path (no wildcard, group, class or negation). */
  isGlob: boolean;
  /** The literal folders before the first wildcard ("/app" for "/app/**"; "" when it starts with one). */
  base: string;
}

const POSIX_CLASSES = new Set(['alnum', 'alpha', 'ascii', 'blank', 'cntrl', 'digit', 'graph', 'lower', 'print', 'punct', 'space', 'upper', 'word', 'xdigit']);
const EXTGLOB_KINDS: Record<string, string> = { '@': '', '?': '?', '+': '+', '*': '*' };
const ANY_IN_SEGMENT = '[^/]*';

/** What one step of the translation adds, and whether it ends in a star or class (which may take a trailing slash). */
interface Piece {
  source: string;
  wildcardEnd: boolean;
}

const group = (source: string): Piece => ({ source, wildcardEnd: false });

/** One character inside an RE2 class: ASCII punctuation escaped, everything else as it is. */
const classMember = (char: string): string => (/^[\x21-\x2f\x3a-\x40\x5b-\x60\x7b-\x7e]$/.test(char) ? `\\${char}` : char);

/**
 * Secret-path globs with the meaning picomatch gives them on secret paths
 * (Infisical's `$glob`): `*` any characters within one folder name (at least
 * one when it is the whole name), `**` as a whole segment any number of
 * folders (`/app/**` is /app and everything below it; `/app/**\/x` also
 * /app/x; `/**\/x` only below the root; `**\/x` also /x), `?` one character,
 * `[a-z]` / `[^a-z]` / `[[:alpha:]]` a class, `{a,b}` alternatives,
 * `@(a|b)` `?(a|b)` `+(a|b)` `*(a|b)` extglobs, `\` escapes, a leading `!`
 * negates. Syntax whose picomatch meaning surprises is refused rather than
 * given another meaning: `!(…)`, `[!…]`, brace ranges `{1..3}`, a single
 * `{a}`, and `(`, `)`, `|`, `}` outside the groups that use them.
 */
export function translatePathGlob(glob: string): TranslatedPathGlob {
  return new PathGlobTranslator(glob).translate();
}

class PathGlobTranslator {
  readonly #glob: string;
  readonly #budget: PatternBudget;
  #at = 0;
  #start = 0;
  #literal = '';
  #base: string | undefined;

  constructor(glob: string) {
    this.#glob = glob;
    this.#budget = PatternBudget.check(glob);
  }

  translate(): TranslatedPathGlob {
    let negated = false;
    while (this.#peek() === '!' && this.#glob[this.#at + 1] !== '(') {
      negated = !negated;
      this.#at++;
    }
    this.#start = this.#at;
    const body = this.#sequence(new Set(), false);
    return {
      source: `^(?:${body})$`,
      negated,
      isGlob: negated || this.#base !== undefined,
      base: negated ? '' : (this.#base ?? this.#literal),
    };
  }

  /** Translates up to the end or one of `stops` (left unread). */
  #sequence(stops: ReadonlySet<string>, inGroup: boolean): string {
    let out = '';
    let segmentStart = true;
    let endsInWildcard = false;
    while (this.#at < this.#glob.length && !stops.has(this.#peek())) {
      const piece = this.#next(stops, inGroup, segmentStart);
      out += piece.source;
      segmentStart = this.#glob[this.#at - 1] === '/';
      endsInWildcard = piece.wildcardEnd;
    }
    // picomatch lets a trailing star or class match a trailing slash too ("*" matches "/")
    return !inGroup && endsInWildcard ? `${out}/?` : out;
  }

  #next(stops: ReadonlySet<string>, inGroup: boolean, segmentStart: boolean): Piece {
    const char = this.#glob[this.#at]!;
    const next = this.#glob[this.#at + 1];
    if (char === '/' && this.#globstarAt(this.#at + 1, stops)) return group(this.#slashGlobstar(stops, inGroup));
    if (char === '*' && next === '*' && segmentStart && this.#globstarAt(this.#at, stops)) return group(this.#leadingGlobstar(stops, inGroup));
    if (next === '(' && char in EXTGLOB_KINDS) return group(this.#extglob(char));
    switch (char) {
      case '*':
        return this.#star(stops, inGroup, segmentStart);
      case '?':
        this.#wildcard();
        this.#at++;
        return { source: '[^/]', wildcardEnd: false };
      case '[':
        this.#wildcard();
        return { source: this.#characterClass(), wildcardEnd: true };
      case '{':
        return group(this.#braces());
      case '!':
        if (next === '(')
          throw new PatternError("uses '!(…)', which is not supported: list what to match with @(…) or {…}, or negate the whole pattern with a leading '!'");
        return this.#literalChar(this.#at);
      case '(':
      case ')':
      case '|':
        throw new PatternError(`has '${char}' outside an extglob such as @(a|b); escape it as '\\${char}' to mean the character`);
      case '}':
        throw new PatternError("has '}' without an opening '{'; escape it as '\\}' to mean the character");
      case '\\':
        if (this.#at + 1 >= this.#glob.length) throw new PatternError("ends in a lone '\\'");
        return this.#literalChar(this.#at + 1);
      default:
        return this.#literalChar(this.#at);
    }
  }

  #literalChar(at: number): Piece {
    const char = String.fromCodePoint(this.#glob.codePointAt(at)!);
    this.#at = at + char.length;
    if (this.#base === undefined) this.#literal += char;
    return { source: char === '/' ? '/' : RE2JS.quote(char), wildcardEnd: false };
  }

  /** Counts a wildcard and marks where the first one is: the folders before its segment are the glob's base. */
  #wildcard(baseIsWholeLiteral = false): void {
    this.#budget.wildcard();
    this.#markGlob(baseIsWholeLiteral);
  }

  #markGlob(baseIsWholeLiteral = false): void {
    if (this.#base !== undefined) return;
    this.#base = baseIsWholeLiteral ? this.#literal : this.#literal.slice(0, Math.max(0, this.#literal.lastIndexOf('/')));
  }

  /** `**` from `at` on is a whole segment: followed by the end, a `/`, or the end of the group around it. */
  #globstarAt(at: number, stops: ReadonlySet<string>): boolean {
    if (this.#glob[at] !== '*' || this.#glob[at + 1] !== '*') return false;
    const after = this.#glob[at + 2];
    return after === undefined || after === '/' || stops.has(after);
  }

  /** `/**` (and any `/**` right after it, which add nothing). */
  #slashGlobstar(stops: ReadonlySet<string>, inGroup: boolean): string {
    const slashAtStart = this.#at === this.#start;
    const afterStar = this.#at > 0 && this.#glob[this.#at - 1] === '*' && this.#glob[this.#at - 2] !== '\\';
    this.#wildcard(true);
    this.#at += 3;
    while (this.#glob[this.#at] === '/' && this.#globstarAt(this.#at + 1, stops)) this.#at += 3;
    const atEnd = this.#at >= this.#glob.length || stops.has(this.#peek());
    if (inGroup || slashAtStart) return '/.*';
    if (atEnd) return afterStar ? '/.*' : '(?:/.*)?';
    this.#at++; // the '/' that follows: zero or more folders in between (or, before more pattern, none and an end, as picomatch reads it)
    return this.#at < this.#glob.length ? '(?:/.*/|/|$)' : '(?:/.*/|/)';
  }

  /** `**` opening the pattern or a group alternative. */
  #leadingGlobstar(stops: ReadonlySet<string>, inGroup: boolean): string {
    this.#wildcard();
    this.#at += 2;
    while (this.#glob[this.#at] === '/' && this.#globstarAt(this.#at + 1, stops)) this.#at += 3;
    if (inGroup || this.#at >= this.#glob.length || stops.has(this.#peek())) return '.*';
    this.#at++; // "**/x": x at any depth, the root's own included
    return '(?:.*/)?';
  }

  #star(stops: ReadonlySet<string>, inGroup: boolean, segmentStart: boolean): Piece {
    this.#wildcard();
    const from = this.#at;
    while (this.#peek() === '*') this.#at++;
    const run = this.#at - from;
    const after = this.#peek();
    if (run === 2 && segmentStart && (after === '{' || (after in EXTGLOB_KINDS && this.#glob[this.#at + 1] === '('))) {
      throw new PatternError("has '**' directly before a group, which glob libraries read differently: write '**/{…}' (any folders) or '*{…}' (within one name)");
    }
    const atEnd = this.#at >= this.#glob.length || stops.has(after);
    // a whole-name star needs at least one character (picomatch's `(?=.)`), which at the very end may be the slash
    if (!inGroup && run === 1 && segmentStart && atEnd) return { source: '(?:[^/]+/?|/)', wildcardEnd: false };
    return { source: ANY_IN_SEGMENT, wildcardEnd: true };
  }

  #extglob(kind: string): string {
    this.#markGlob();
    this.#at += 2;
    const alternatives = this.#alternatives('|', ')', `'${kind}(' without a closing ')'`);
    return `(?:${alternatives.join('|')})${EXTGLOB_KINDS[kind]}`;
  }

  #braces(): string {
    const close = this.#glob.indexOf('}', this.#at);
    if (close >= 0 && /^\{[^{},]*\.\.[^{},]*\}$/.test(this.#glob.slice(this.#at, close + 1))) {
      throw new PatternError('uses a brace range such as {1..3}, which is not supported: list the values, {1,2,3}');
    }
    this.#markGlob();
    this.#at++;
    const alternatives = this.#alternatives(',', '}', "'{' without a closing '}'");
    if (alternatives.length < 2) throw new PatternError("has a '{…}' group without a ',': write {a,b}, or escape the braces to mean the characters");
    return `(?:${alternatives.join('|')})`;
  }

  /** The alternatives of a group, up to and past its closing character. */
  #alternatives(separator: string, close: string, unclosed: string): string[] {
    this.#budget.enterGroup();
    const stops = new Set([separator, close]);
    const alternatives = [this.#sequence(stops, true)];
    while (this.#peek() === separator) {
      this.#at++;
      alternatives.push(this.#sequence(stops, true));
    }
    if (this.#peek() !== close) throw new PatternError(`has ${unclosed}`);
    this.#at++;
    this.#budget.leaveGroup(alternatives.length);
    return alternatives;
  }

  /** `[abc]`, `[a-z]`, `[^abc]`, `[[:alpha:]]`: one character of a folder name. */
  #characterClass(): string {
    let at = this.#at + 1;
    let out = '';
    if (this.#glob[at] === '!') throw new PatternError("starts a class with '[!', whose meaning differs between glob libraries: write '[^…]' for a negated class");
    const negated = this.#glob[at] === '^';
    if (negated) at++;
    const bodyStart = at;
    for (;;) {
      const char = this.#glob[at];
      if (char === undefined) throw new PatternError("has '[' without a closing ']'; escape it as '\\[' to mean the character");
      if (char === ']' && at > bodyStart) break;
      if (char === '/') throw new PatternError("has '/' inside a […] class: a class matches one character of a folder name");
      if (char === '[' && this.#glob[at + 1] === ':') {
        const end = this.#glob.indexOf(':]', at + 2);
        const name = end < 0 ? '' : this.#glob.slice(at + 2, end);
        if (!POSIX_CLASSES.has(name)) throw new PatternError("has an unknown '[:…:]' class: use alnum, alpha, digit, lower, upper, word, xdigit, …");
        out += `[:${name}:]`;
        at = end + 2;
        continue;
      }
      const escaped = char === '\\' && at + 1 < this.#glob.length;
      if (escaped) at++;
      const member = String.fromCodePoint(this.#glob.codePointAt(at)!);
      out += member === '-' && !escaped ? '-' : classMember(member);
      at += member.length;
    }
    this.#at = at + 1;
    return negated ? `[^/${out}]` : `[${out}]`;
  }

  #peek(): string {
    return this.#glob[this.#at] ?? '';
  }
}
