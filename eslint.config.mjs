// typescript-eslint's recommended rules, tuned to what the code base meets; style is Prettier's (.prettierrc).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** A require() whose result is typed `typeof import('same module')`: dependency-cruiser sees both, so the edge is not hidden. */
const TYPED_REQUIRE = "TSAsExpression[typeAnnotation.type='TSTypeQuery'][typeAnnotation.exprName.type='TSImportType'] > CallExpression.expression";

export default tseslint.config(
  { ignores: ['dist/**', '.tools/**', '.data/**', 'node_modules/**', 'test/fixtures/**', 'coverage/**', '**/*.generated.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2022, sourceType: 'module' },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // A lazy require() hides an import edge from the layer rules (.dependency-cruiser.cjs): imports are static.
      '@typescript-eslint/no-require-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
    },
  },
  {
    // Type-aware rules (as Temporal's own samples turn on first): a promise nobody awaits or
    // catches is a failure nobody sees, and a promise where a callback's void is expected (an
    // event handler, forEach) is one too.
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
  {
    // The CLI loads each command's code when it runs (test/integration/package.test.ts: --version and
    // `who` load no Temporal, pg, fastify or zod), through require() typed as the module it loads;
    // so does the gate program, started afresh by every git call it judges (its PreToolUse mode's zod
    // and shell parser load only there).
    files: ['**/src/cli/**/*.ts', '**/src/gate/main.ts'],
    rules: {
      '@typescript-eslint/no-require-imports': 'off',
      'no-restricted-syntax': [
        'error',
        {
          selector: `CallExpression[callee.name='require']:not(${TYPED_REQUIRE})`,
          message:
            "A lazy require() in the CLI and the gate is typed as the module it loads (require('x') as typeof import('x')), so the layer rules see the edge.",
        },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { require: 'readonly', module: 'writable', __dirname: 'readonly', process: 'readonly', console: 'readonly' },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
