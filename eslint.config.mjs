// `npm run lint` (and the first step of `npm test`): typescript-eslint's recommended type-checked
// rules on every TypeScript file (typed by tsconfig.json, or web/tsconfig.json for the page),
// ESLint's recommended rules on the plain JavaScript, and a formatter check (ESLint Stylistic)
// set to the style the code is already written in. Where the rules differ from the presets, the
// reason is given beside them. `npx eslint --fix <files>` applies the formatter's rules.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';
import stylistic from '@stylistic/eslint-plugin';
import globals from 'globals';

/** The formatter: what it enforces is exactly this list; where lines break is left to the author. */
const format = {
  // A line a reader takes in at once: 140 characters, comments included. A string, template literal,
  // regular expression or URL may run past it, since breaking one changes or hides what it says.
  '@stylistic/max-len': ['error', {
    code: 140, ignoreUrls: true, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true,
  }],
  '@stylistic/indent': ['error', 2, { offsetTernaryExpressions: true }],
  '@stylistic/indent-binary-ops': ['error', 2],
  '@stylistic/linebreak-style': ['error', 'unix'],
  '@stylistic/no-tabs': 'error',
  '@stylistic/no-trailing-spaces': 'error',
  '@stylistic/eol-last': 'error',
  '@stylistic/no-multiple-empty-lines': ['error', { max: 1, maxBOF: 0, maxEOF: 0 }],
  '@stylistic/padded-blocks': ['error', 'never'],
  // Single quotes; a string holding one may use double quotes, and template literals are free.
  '@stylistic/quotes': ['error', 'single', { avoidEscape: true, allowTemplateLiterals: 'always' }],
  '@stylistic/quote-props': ['error', 'as-needed'],
  '@stylistic/semi': ['error', 'always'],
  '@stylistic/semi-spacing': 'error',
  '@stylistic/no-extra-semi': 'error',
  '@stylistic/member-delimiter-style': 'error',
  '@stylistic/comma-dangle': ['error', 'always-multiline'],
  '@stylistic/comma-spacing': 'error',
  '@stylistic/comma-style': 'error',
  // A broken line starts with its operator, except `=` (a type alias's union, a long initializer), which ends it.
  '@stylistic/operator-linebreak': ['error', 'before', { overrides: { '=': 'after' } }],
  '@stylistic/dot-location': ['error', 'property'],
  '@stylistic/arrow-parens': ['error', 'always'],
  '@stylistic/arrow-spacing': 'error',
  '@stylistic/block-spacing': 'error',
  '@stylistic/key-spacing': 'error',
  '@stylistic/keyword-spacing': 'error',
  '@stylistic/space-before-blocks': 'error',
  '@stylistic/space-before-function-paren': ['error', { anonymous: 'always', named: 'never', asyncArrow: 'always' }],
  '@stylistic/function-call-spacing': 'error',
  '@stylistic/space-in-parens': 'error',
  '@stylistic/space-infix-ops': 'error',
  '@stylistic/space-unary-ops': 'error',
  '@stylistic/no-multi-spaces': 'error',
  '@stylistic/no-whitespace-before-property': 'error',
  '@stylistic/object-curly-spacing': ['error', 'always'],
  '@stylistic/array-bracket-spacing': 'error',
  '@stylistic/computed-property-spacing': 'error',
  '@stylistic/template-curly-spacing': 'error',
  '@stylistic/rest-spread-spacing': 'error',
  '@stylistic/switch-colon-spacing': 'error',
  '@stylistic/generator-star-spacing': ['error', 'after'],
  '@stylistic/yield-star-spacing': ['error', 'after'],
  '@stylistic/type-annotation-spacing': 'error',
  '@stylistic/type-generic-spacing': 'error',
  '@stylistic/type-named-tuple-spacing': 'error',
  '@stylistic/spaced-comment': ['error', 'always', { markers: ['/'] }],
  '@stylistic/new-parens': 'error',
  '@stylistic/no-floating-decimal': 'error',
  '@stylistic/wrap-iife': 'error',
};

export default defineConfig(
  {
    ignores: ['dist/**', 'node_modules/**', 'vendor/**', 'test/artifacts/**', 'bench/results/**', 'bench/quick/**', '.cache/**', '.tmp-dbg/**'],
  },
  { linterOptions: { reportUnusedDisableDirectives: 'error' } },
  js.configs.recommended,
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.recommendedTypeChecked],
    // The two programs named (not projectService, which took a fifth more time and memory here);
    // a .ts file outside both is an error that names it: add its folder to tsconfig.json.
    languageOptions: { parserOptions: { project: ['./tsconfig.json', './web/tsconfig.json'], tsconfigRootDir: import.meta.dirname } },
    rules: {
      // The code writes `!` on indexed reads (`rows[i]!`) as if noUncheckedIndexedAccess were on,
      // marking where a value is known to be there; without that option the rule calls them unnecessary.
      '@typescript-eslint/no-unnecessary-type-assertion': 'off',
      // Async functions without await implement promise-returning interfaces (the in-memory payment
      // guard beside the Redis one, MCP and hapi handlers) and turn a throw into a rejection.
      '@typescript-eslint/require-await': 'off',
      // Interfaces declare callbacks with method syntax (`sent(): void`, `pageBoxes()`); they are
      // closures that never use `this`, and are passed around unbound on purpose.
      '@typescript-eslint/unbound-method': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true, caughtErrors: 'none' }],
      // Rethrowing or rejecting with what was caught (`signal.reason`, a caught `err`) keeps the original value.
      '@typescript-eslint/only-throw-error': ['error', { allowThrowingAny: true, allowThrowingUnknown: true }],
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingAny: true, allowThrowingUnknown: true }],
      // A `let` that a closure declared before its assignment reads stays a `let` (const would throw there).
      'prefer-const': ['error', { destructuring: 'all', ignoreReadBeforeAssign: true }],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    languageOptions: { globals: globals.node },
  },
  {
    // The MuPDF programs that `mutool run` runs (tools/engines/mupdf/): MuJS, an ES5 interpreter,
    // with MuPDF's classes and mutool's few functions as globals instead of Node's; a file is a
    // script, and a module for the others (require) sets properties of `exports`.
    files: ['tools/engines/mupdf/**/*.js'],
    languageOptions: {
      ecmaVersion: 5,
      sourceType: 'script',
      globals: {
        // mutool run: the arguments after the program's path, the program's own path, output, exit, modules.
        scriptArgs: 'readonly', scriptPath: 'readonly', print: 'readonly', quit: 'readonly', require: 'readonly', exports: 'writable',
        // MuPDF's document model, as the programs use it.
        Document: 'readonly', PDFDocument: 'readonly', DocumentWriter: 'readonly', Identity: 'readonly',
      },
    },
    rules: {
      // MuJS has no optional catch binding (ES2019), so a catch that only skips a damaged object still
      // names the error; device callbacks take MuPDF's positional arguments, used or not.
      'no-unused-vars': ['error', { caughtErrors: 'none', args: 'none' }],
    },
  },
  {
    // Tests, benchmarks and the local chains' servers read JSON answers and reports as `any`, and
    // hand async request handlers to http.createServer, which ignores the promise (a handler's own
    // failure ends its test).
    files: ['test/**', 'container-test/**', 'bench/**', 'devchains/**'],
    rules: {
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
    },
  },
  {
    files: ['test/**', 'container-test/**', 'bench/**'],
    rules: {
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-redundant-type-constituents': 'off',
      '@typescript-eslint/no-base-to-string': 'off',
      '@typescript-eslint/restrict-template-expressions': 'off',
    },
  },
  {
    // The PDF checks match raw bytes of the file format, control characters included.
    files: ['checks/pdf.ts'],
    rules: { 'no-control-regex': 'off' },
  },
  {
    plugins: { '@stylistic': stylistic },
    rules: format,
  },
);
