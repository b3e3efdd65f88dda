import { RE2JS } from 're2js';

/**
 * A glob over key names as an RE2 pattern: `*` any run of characters, `?` one
 * character, `[abc]` / `[a-z]` / `[!abc]` a class, `{a,b}` alternatives, `\`
 * escapes the next character; everything else literal, the whole name matched.
 * Written here rather than taken from picomatch because picomatch builds
 * backtracking JavaScript regexes (a pattern like `*a*a*a*b` is exponential
 * against a long key), and patterns come from namespace users: RE2 matches in
 * linear time. Throws GlobSyntaxError for an unbalanced class or brace.
 */
export function compileGlob(glob: string): RE2JS {
  return RE2JS.compile(`^(?:${new GlobTranslator(glob).translate()})$`, RE2JS.DOTALL);
}

export class GlobSyntaxError extends Error {}

class GlobTranslator {
  readonly #glob: string;
  #at = 0;
  #braces = 0;

  constructor(glob: string) {
    this.#glob = glob;
  }

  translate(): string {
    let out = '';
    while (this.#at < this.#glob.length) out += this.#next();
    if (this.#braces > 0) throw new GlobSyntaxError(`'{' without a closing '}' in '${this.#glob}'`);
    return out;
  }

  #next(): string {
    const char = this.#glob[this.#at++]!;
    switch (char) {
      case '*':
        return '.*';
      case '?':
        return '.';
      case '[':
        return this.#characterClass();
      case '{':
        this.#braces++;
        return '(?:';
      case '}':
        if (this.#braces === 0) return '\\}';
        this.#braces--;
        return ')';
      case ',':
        return this.#braces > 0 ? '|' : ',';
      case '\\':
        return this.#at < this.#glob.length ? RE2JS.quote(this.#glob[this.#at++]!) : '\\\\';
      default:
        return RE2JS.quote(char);
    }
  }

  #characterClass(): string {
    const end = this.#glob.indexOf(']', this.#at + 1);
    if (end < 0) throw new GlobSyntaxError(`'[' without a closing ']' in '${this.#glob}'`);
    let body = this.#glob.slice(this.#at, end);
    this.#at = end + 1;
    const negated = body.startsWith('!') || body.startsWith('^');
    if (negated) body = body.slice(1);
    // inside a class only these are special to RE2
    const escaped = body.replace(/[\\\]^[]/g, (special) => `\\${special}`);
    return `[${negated ? '^' : ''}${escaped}]`;
  }
}
