// `npm run lint`: the direction of imports that makes the layout tell the architecture
// (docs/architecture.md, "Where things live"): domain < database < eventstore < projections
// < commands < worker < http < runtime and cli, with security (hashing, sealing, the SSRF guard)
// beside the database. Type-only imports count for every rule, cycles included.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'Modules that import each other (types too) cannot be read, tested or moved one at a time.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'domain-is-pure',
      comment: 'src/domain imports nothing of ours but src/domain: no I/O, no HTTP, no SQL.',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { path: '^src/', pathNot: '^src/domain/' },
    },
    {
      name: 'database-below-the-log',
      comment: 'The database layer opens, migrates and types the database; it knows no event, projection or area.',
      severity: 'error',
      from: { path: '^src/database/' },
      to: { path: '^src/(domain|eventstore|projections|commands|security|worker|http|cli|geo)/|^src/(runtime|bootstrap)\\.ts$' },
    },
    {
      name: 'security-is-a-leaf',
      comment: 'Hashing, sealing and the SSRF guard serve commands and HTTP alike; they know neither.',
      severity: 'error',
      from: { path: '^src/security/' },
      to: { path: '^src/(eventstore|projections|commands|worker|http|cli|geo)/|^src/(runtime|bootstrap)\\.ts$' },
    },
    {
      name: 'projections-below-commands-and-http',
      comment: 'Projections read and write tables from events; they issue no commands and know no HTTP.',
      severity: 'error',
      from: { path: '^src/projections/' },
      to: { path: '^src/(commands|worker|http|cli|geo)/|^src/(runtime|bootstrap)\\.ts$' },
    },
    {
      name: 'commands-below-http',
      comment: 'Commands know nothing of HTTP.',
      severity: 'error',
      from: { path: '^src/commands/' },
      to: { path: '^src/(worker|http|cli)/|^src/(runtime|bootstrap)\\.ts$' },
    },
    {
      name: 'eventstore-is-the-base',
      comment: 'The event store knows no area: not their domain, commands, projections or HTTP.',
      severity: 'error',
      from: { path: '^src/eventstore/' },
      to: { path: '^src/(domain|commands|projections|security|worker|http|cli|geo)/|^src/(runtime|bootstrap)\\.ts$' },
    },
    {
      name: 'worker-below-http',
      comment: 'The worker follows the log for projections and reactors; it knows no HTTP.',
      severity: 'error',
      from: { path: '^src/worker/' },
      to: { path: '^src/(http|cli)/|^src/runtime\\.ts$' },
    },
    {
      name: 'http-not-to-cli',
      severity: 'error',
      from: { path: '^src/http/' },
      to: { path: '^src/cli/|^src/runtime\\.ts$' },
    },
    {
      name: 'not-to-tests-or-bench',
      comment: 'Shipped code never imports tests or benchmarks.',
      severity: 'error',
      from: { path: '^(src|migrations|scripts)/' },
      to: { path: '^(test|bench)/' },
    },
    {
      name: 'migrations-frozen-in-time',
      comment: 'Migrations never import application code (Kysely: "frozen in time").',
      severity: 'error',
      from: { path: '^migrations/' },
      to: { path: '^src/' },
    },
    {
      name: 'no-unresolvable',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^node_modules' },
    // Packages that publish only through "exports" (uuid, hono's subpaths, tsx) resolve as Node does.
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'], mainFields: ['module', 'main', 'types'] },
  },
};
