/**
 * The shape the build keeps (`npm run lint`): design.md "Layers" and the store rule.
 *
 *   http/, operator/, cli/, main.ts ─▶ app/ (the composition root) ─▶ <domain>/ services ─▶ <domain>/ stores ─▶ db/
 *
 * services/ is the write kernel every domain shares (ServiceDeps, the unit of work, the cached lookups); app/
 * wires the domains together and is imported only by the entry points.
 *
 * A domain is a folder of src/ holding its schema, service, lookup and store.
 * Another domain reads it through its store's read functions (find*, list*, …:
 * eslint checks the names) or its lookup (find-or-404), and writes through its
 * service module.
 */
const ENTRY_POINTS = '^src/(http|operator|remote|cli|app)/|^src/(main|runtime)\\.ts$';

module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'No import cycles, type-only imports included: each module can be read after the ones it uses.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'store-of-another-domain',
      comment:
        "A domain's store is its own to write: another domain may import its reads (eslint keeps those imports to find/list/… names); stores never import each other.",
      severity: 'error',
      from: { path: '^src/([^/]+)/[^/]+-store\\.ts$' },
      to: { path: '^src/[^/]+/[^/]+-store\\.ts$', pathNot: '^src/$1/' },
    },
    {
      name: 'store-holds-sql-only',
      comment: 'Stores hold SQL: they use db/ and their own domain, never a service, a lookup or the layers above.',
      severity: 'error',
      from: { path: '-store\\.ts$' },
      to: { path: ['-(service|lookup)\\.ts$', '^src/(services|caches|http|operator|cli)/'] },
    },
    {
      name: 'domains-below-entry-points',
      comment: 'Services and stores never reach up into the HTTP layer, the operator or the command line.',
      severity: 'error',
      from: { pathNot: ENTRY_POINTS },
      to: { path: ENTRY_POINTS, pathNot: '^src/cli/exit-codes\\.ts$' },
    },
    {
      name: 'composition-root-for-entry-points',
      comment: 'Only the entry points (and the tests) are handed the assembled services; a domain gets its ServiceDeps.',
      severity: 'error',
      from: { path: '^src/', pathNot: ENTRY_POINTS },
      to: { path: '^src/app/' },
    },
    {
      name: 'entry-points-call-services',
      comment: 'Routes, the operator and the commands call services: no store, no SQL.',
      severity: 'error',
      from: { path: '^src/(http|operator)/' },
      to: { path: ['-store\\.ts$', '^src/db/(?!(database|schema)\\.ts$)'] },
    },
    {
      name: 'operator-without-database',
      comment: 'The operator is just another actor: it never imports db/ (not even its types) and never holds a database handle of its own.',
      severity: 'error',
      from: { path: '^src/(operator|remote)/' },
      to: { path: '^src/db/' },
    },
    {
      name: 'db-is-the-bottom',
      comment: 'db/ knows connections, migrations and the schema; nothing of the domains.',
      severity: 'error',
      from: { path: '^src/db/' },
      to: { path: '^src/', pathNot: '^src/db/' },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|node_modules)/' },
  },
};
