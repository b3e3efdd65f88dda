import { RE2JS } from 're2js';
import { PatternBudget } from './pattern-budget.ts';
import { PatternError } from './pattern-limits.ts';

/**
 * A glob over key names as RE2 source: `*` any run of characters, `?` one
 * character, `[abc]` / `[a-z]` / `[!abc]` / `[^abc]` a class, `{a,b}`
 * alternatives, `\` escapes the next character; everything else literal, the
 * whole name matched. Key names have no folders, so `*` crosses every character.
 */
export function translateNameGlob(glob: string): string {
  return `^(?:${new NameGlobTranslator(glob).translate()})$`;
}

class NameGlobTranslator {
  readonly #glob: string;
  readonly #budget: PatternBudget;
  #at = 0;
  /** Alternatives counted so far in each open brace group. */
  readonly #open: number[] = [];

  constructor(glob: string) {
    this.#glob = glob;
    this.#budget = PatternBudget.check(glob);
  }

  translate(): string {
    let out = '';
    while (this.#at < this.#glob.length) out += this.#next();
    if (this.#open.length > 0) throw new PatternError("has '{' without a closing '}'");
    return out;
  }

  #next(): string {
    const char = this.#glob[this.#at++]!;
    switch (char) {
      case '*':
        this.#budget.wildcard();
        while (this.#glob[this.#at] === '*') this.#at++;
        return '.*';
      case '?':
        this.#budget.wildcard();
        return '.';
      case '[':
        this.#budget.wildcard();
        return this.#characterClass();
      case '{':
        this.#budget.enterGroup();
        this.#open.push(1);
        return '(?:';
      case '}':
        if (this.#open.length === 0) return '\\}';
        this.#budget.leaveGroup(this.#open.pop()!);
        return ')';
      case ',':
        if (this.#open.length === 0) return ',';
        this.#open[this.#open.length - 1]!++;
        return '|';
      case '\\':
        return this.#at < this.#glob.length ? RE2JS.quote(this.#glob[this.#at++]!) : '\\\\';
      default:
        return RE2JS.quote(char);
    }
  }

  #characterClass(): string {
    const end = this.#glob.indexOf(']', this.#at + 1);
    if (end < 0) throw new PatternError("has '[' without a closing ']'");
    let body = this.#glob.slice(this.#at, end);
    this.#at = end + 1;
    const negated = body.startsWith('!') || body.startsWith('^');
    if (negated) body = body.slice(1);
    // inside a class only these are special to RE2
    const escaped = body.replace(/[\\\]^[]/g, (special) => `\\${special}`);
    return `[${negated ? '^' : ''}${escaped}]`;
  }
}
