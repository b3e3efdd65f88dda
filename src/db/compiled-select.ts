import { type Compilable, type CompiledQuery, createQueryId } from 'kysely';
import type { ReadOnlyDb } from './database.ts';

/** Where one of a compiled select's values goes: the value is given each time it runs. */
class ValueSlot {
  readonly index: number;

  constructor(index: number) {
    this.index = index;
  }
}

/**
 * A SELECT of one shape, built and compiled by Kysely the first time it runs and sent as compiled after that, with
 * the values of each call. Kysely otherwise builds a query's tree, freezes it, runs the plugins over it and compiles
 * it on every call: at a 10,000-Integration cold start that was 12% of the operator's busy time, a fifth of it for
 * three statements of one shape each (the cache versions read, the project lock, the change log read). Hand-written
 * because Kysely keeps no such cache.
 *
 * `build` gets a stand-in for each value and must give each one to Kysely as a value (a `where` operand, a `limit`):
 * its shape may not depend on them. Only a SELECT: the plugins that run once, at the first compile, would miss a
 * write (db/write-watch.ts sees the tables each write statement writes, as it is compiled).
 */
export function compiledSelect<Values extends unknown[], Row>(
  build: (db: ReadOnlyDb, ...values: Values) => Compilable<Row>,
): (db: ReadOnlyDb, ...values: Values) => Promise<Row[]> {
  let compiled: CompiledQuery<Row> | undefined;
  return async (db, ...values) => {
    compiled ??= compileWithSlots(db, build, values.length);
    const parameters = compiled.parameters.map((parameter) => (parameter instanceof ValueSlot ? values[parameter.index] : parameter));
    const { rows } = await db.executeQuery<Row>({ ...compiled, parameters, queryId: createQueryId() });
    return rows;
  };
}

function compileWithSlots<Values extends unknown[], Row>(
  db: ReadOnlyDb,
  build: (db: ReadOnlyDb, ...values: Values) => Compilable<Row>,
  count: number,
): CompiledQuery<Row> {
  const slots = Array.from({ length: count }, (_, index) => new ValueSlot(index));
  const compiled = build(db, ...(slots as unknown as Values)).compile();
  if (compiled.query.kind !== 'SelectQueryNode') throw new Error(`a compiled select must be a SELECT, not a ${compiled.query.kind}`);
  const used = new Set(compiled.parameters.filter((parameter) => parameter instanceof ValueSlot).map((slot) => slot.index));
  if (used.size !== count) throw new Error(`a compiled select must put each of its ${count} values in as a parameter (${used.size} are)`);
  return compiled;
}
