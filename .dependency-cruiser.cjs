/**
 * The layers of src/, as rules: `npm run lint:deps` fails on an import that crosses one the wrong way.
 * test/unit/layers.test.ts plants a back-edge of each kind and sees the rule name it.
 *
 * The order, top down (docs/architecture.md, Layers): the HTTP surface (src/api) -> the service
 * (src/api/service) -> the client (src/client) -> workflow code (src/workflows); beside it
 * activities, landings, reconcile and provenance -> store | git -> contract -> domain. No file
 * cycle anywhere, no folder cycle in src/. `lint:deps` cruises the kits (scripts, worker.ts,
 * chaos, faults, torture, multihost, stack, bench) too: the rules written for src/ are scoped to
 * it (a kit may read the database with pg), and src/ never imports a kit.
 */
const KITS = '^(scripts|chaos|faults|torture|multihost|stack|bench|test)/|^worker\\.ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'domain-is-pure',
      comment: 'src/domain is the pure model (decisions, checks, names): it imports only itself and zod, so the workflow sandbox and every client can load it.',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { pathNot: ['^src/domain/', '(^|/)node_modules/zod/'] },
    },
    {
      name: 'contract-is-pure',
      comment:
        'src/contract holds the wire schemas and types (zod): it imports only itself, domain and zod, so `worktree-ownership/schemas` loads nothing else.',
      severity: 'error',
      from: { path: '^src/contract/' },
      to: { pathNot: ['^src/contract/', '^src/domain/', '(^|/)node_modules/zod/', '^src/version\\.ts$'] },
    },
    {
      name: 'exports-reexport-contract-and-clients',
      comment:
        'The public entry points re-export the contract and the typed clients (Temporal-level src/client with its git worktree resolver, HTTP src/api/client.ts), nothing of the service.',
      severity: 'error',
      from: { path: '^src/exports/' },
      to: {
        pathNot: [
          '^src/exports/',
          '^src/contract/',
          '^src/domain/',
          '^src/client/',
          '^src/adapters/worktree-resolver\\.ts$',
          '^src/api/client\\.ts$',
          '^src/infra/payload-codec\\.ts$',
          '^src/version\\.ts$',
          '(^|/)node_modules/',
        ],
      },
    },
    {
      name: 'sql-only-in-store',
      comment:
        'src/store is the only place with SQL: nothing else imports pg (a Pool is passed around as the store/db type). The one other spot is src/infra/postgres.ts, which creates the database itself before any pool exists.',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/store/', '^src/infra/postgres\\.ts$'] },
      to: { path: '(^|/)node_modules/(pg|pg-pool|node-pg-migrate)/' },
    },
    {
      name: 'workflows-import-only-workflow-safe-code',
      comment:
        'Workflow code runs in the deterministic sandbox: domain, contract and its own modules, plus type-only imports of the activity interfaces; never store, git, api, infra nor Node built-ins.',
      severity: 'error',
      from: { path: '^src/workflows/' },
      to: {
        pathNot: ['^src/workflows/', '^src/domain/', '^src/contract/', '(^|/)node_modules/(@temporalio/(workflow|common)|zod)/'],
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'workflows-type-imports-only-activity-interfaces',
      comment: 'Even a type-only import from workflow code names only the activity interfaces, never service code.',
      severity: 'error',
      from: { path: '^src/workflows/' },
      to: {
        dependencyTypes: ['type-only'],
        pathNot: ['^src/workflows/', '^src/domain/', '^src/contract/', '^src/activities/types\\.ts$', '(^|/)node_modules/'],
      },
    },
    {
      name: 'workflows-no-node-builtins',
      severity: 'error',
      from: { path: '^src/workflows/' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'client-runs-no-git',
      comment:
        'The typed client stands below the service: it never imports the API nor the store, and it takes a worktree resolver (a port); the git-backed one is passed in by the API/CLI composition.',
      severity: 'error',
      from: { path: '^src/client/' },
      to: { path: '^src/(git|host|store|api|cli|mcp|landings|reconcile|activities)/' },
    },
    {
      name: 'client-imports-workflow-code-only-as-types',
      comment: 'Workflow code is never a value in the client; its message declarations (workflows/messages.ts) are the one shared module.',
      severity: 'error',
      from: { path: '^src/client/' },
      to: { path: '^src/workflows/', pathNot: '^src/workflows/messages\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'api-surface-reads-store-only-through-service',
      comment:
        'The HTTP surface (src/api outside src/api/service: routes, http.ts, the serializer) calls the operations in src/api/service; it names the store only for its types (a Pool passed on).',
      severity: 'error',
      from: { path: '^src/api/', pathNot: '^src/api/service/' },
      to: { path: '^src/store/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'store-runs-no-git',
      comment:
        'src/store is SQL over the pool, nothing else: what reads git and writes rows (provenance, attributions, late work) lives in src/provenance, over both.',
      severity: 'error',
      from: { path: '^src/store/' },
      to: { path: '^src/git/' },
    },
    {
      name: 'git-keeps-no-rows',
      comment: 'src/git is the worktree side (git, the projection files, the journal): it never reaches the database.',
      severity: 'error',
      from: { path: '^src/git/' },
      to: { path: '^src/store/' },
    },
    {
      name: 'store-and-git-import-only-the-model',
      comment:
        'store and git are the bottom of the service: they import domain, contract and ids, never what stands on them (activities, provenance, landings, reconcile, the client, the API).',
      severity: 'error',
      from: { path: '^src/(store|git)/' },
      to: { path: '^src/', pathNot: ['^src/(store|git|domain|contract|ids)/', '^src/version\\.ts$'] },
    },
    {
      name: 'no-circular',
      comment: 'No module reaches itself through its imports, in src/ or in a kit (a cycle inside one folder too).',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'src-imports-no-kit',
      comment: 'The kits (scripts, worker.ts, chaos, faults, torture, multihost, stack, bench) and the tests stand on src/; src/ never imports one of them.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: KITS },
    },
    {
      name: 'kits-import-workflow-code-only-as-types',
      comment:
        "A kit runs outside the workflow sandbox, as the client does: workflow code is a type there, its message declarations (workflows/messages.ts) the one shared module. bench/workflows is the bench worker's bundle entry, workflow code itself.",
      severity: 'error',
      from: { path: KITS, pathNot: '^bench/workflows/' },
      to: { path: '^src/workflows/', pathNot: '^src/workflows/messages\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'no-folder-cycle',
      comment:
        'Folders depend one way: landings and reconcile are services over store and git; mcp stands on api; src/server, the composition root, mounts both and nothing imports it.',
      severity: 'error',
      scope: 'folder',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'only-entry-points-import-the-composition-root',
      comment: 'src/server wires the API and MCP into one process; the service code it mounts never reaches back into it.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/server/' },
      to: { path: '^src/server/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
