import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * Type-aware linting (`npm run lint`, part of `npm test`): typescript-eslint's
 * recommended type-checked rules over the sources, the tests and the benchmarks.
 */
const BACKTRACKING_GLOB_LIBRARIES = ['picomatch', 'minimatch', 'micromatch', 'anymatch', 'globrex', 'glob-to-regexp'];
const PATTERNS_MESSAGE =
  'User-supplied patterns compile only in src/patterns/patterns.ts (RE2, linear time, bounded): use compilePathGlob, compileNameGlob or compileRegex.';
const CLIENT_NODE_MESSAGE =
  "import the Kubernetes client's values from src/kubernetes/client-node.ts (the build bundles what it exports; the package's index loads every API group); types may come from the package";

const PATTERN_SYNTAX = [
  { selector: "NewExpression[callee.name='RegExp']", message: PATTERNS_MESSAGE },
  { selector: "CallExpression[callee.name='RegExp']", message: PATTERNS_MESSAGE },
  {
    // `text.match(value)` compiles `value` as a RegExp: only a regex literal or a CONSTANT_CASE regex may be passed
    selector:
      "CallExpression[callee.type='MemberExpression'][callee.property.name=/^(match|matchAll|search)$/]:not([arguments.0.regex]):not([arguments.0.name=/^[A-Z][A-Z0-9_]*$/])",
    message: PATTERNS_MESSAGE,
  },
];

/** SQL lives in stores (`*-store.ts`) and in db/ (connections, migrations, transaction statements): design.md "Layers". */
const SQL_HOMES = ['src/**/*-store.ts', 'src/db/**'];
const SQL_MESSAGE = "SQL only in a store (*-store.ts) or in src/db/: move this query into the domain's store and call it from here.";
const SQL_SYNTAX = [
  {
    // Kysely's query builders: every statement starts with one of these
    selector:
      "CallExpression[callee.type='MemberExpression'][callee.property.name=/^(selectFrom|selectNoFrom|insertInto|replaceInto|updateTable|deleteFrom|mergeInto|executeQuery)$/]",
    message: SQL_MESSAGE,
  },
  { selector: "ImportDeclaration[source.value='kysely'][importKind!='type'] > ImportSpecifier[imported.name='sql'][importKind!='type']", message: SQL_MESSAGE },
  { selector: "TaggedTemplateExpression[tag.name='sql']", message: SQL_MESSAGE },
];

/** Another domain's store is read, never written, from outside: its write functions are called through its service (and unit of work). */
const FOREIGN_STORE_READS = {
  group: ['../*/*-store.ts'],
  allowImportNamePattern: '^((find|list|require|count|is|to|latest|active|accepted)[A-Z]|[A-Z])',
  allowTypeImports: true,
  message: "Only reads (find*, list*, require*, count*, is*, to*, …) of another domain's store: write through its service.",
};

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'test/clients/go-sdk/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // `_name` marks what a destructuring leaves out on purpose
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // Fastify handlers and hooks, and interface implementations, are async by contract even when they do not await
      '@typescript-eslint/require-await': 'off',
      // a promise handed to a callback that ignores the result (timers, event emitters, Fastify hooks) is caught where it is made
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      // the input rules refuse NUL and other control characters by matching them
      'no-control-regex': 'off',
    },
  },
  {
    // One module compiles user-supplied patterns (src/patterns/, RE2, bounded): no other engine, nowhere else in src/
    files: ['src/**/*.ts'],
    ignores: ['src/patterns/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            ...BACKTRACKING_GLOB_LIBRARIES.map((name) => ({ name, message: PATTERNS_MESSAGE })),
            { name: 're2js', allowTypeImports: true, message: PATTERNS_MESSAGE },
            { name: '@kubernetes/client-node', allowTypeImports: true, message: CLIENT_NODE_MESSAGE },
          ],
          patterns: [FOREIGN_STORE_READS],
        },
      ],
      'no-restricted-syntax': ['error', ...PATTERN_SYNTAX],
    },
  },
  {
    // the one module that imports the Kubernetes client's values (the build bundles what it exports)
    files: ['src/kubernetes/client-node.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': 'off' },
  },
  {
    // SQL only in stores and db/ (a later block's no-restricted-syntax replaces the one above, so it repeats PATTERN_SYNTAX)
    files: ['src/**/*.ts'],
    ignores: ['src/patterns/**', ...SQL_HOMES],
    rules: { 'no-restricted-syntax': ['error', ...PATTERN_SYNTAX, ...SQL_SYNTAX] },
  },
  {
    // not even src/patterns/ uses a backtracking glob library
    files: ['src/patterns/**/*.ts'],
    rules: {
      'no-restricted-syntax': ['error', ...SQL_SYNTAX],
      '@typescript-eslint/no-restricted-imports': ['error', { paths: BACKTRACKING_GLOB_LIBRARIES.map((name) => ({ name, message: PATTERNS_MESSAGE })) }],
    },
  },
  {
    // Tests and benchmarks read JSON bodies and Kubernetes objects as `any` on purpose: what they check is the data.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // vitest's expect(...).method and destructured fixtures are called unbound by design
      '@typescript-eslint/unbound-method': 'off',
      // fuzzed and fixture values are stringified whatever they hold
      '@typescript-eslint/no-base-to-string': 'off',
      // polling loops start with a placeholder the timeout message may show
      'no-useless-assignment': 'off',
    },
  },
);
