// `npm run lint`: the direction of imports that makes the layout tell the architecture
// (docs/architecture.md, "Where things live"). Type-only imports count for the direction
// rules; a cycle is an error when it runs at load time (a cycle made only of type imports,
// like the Database type gathering every area's tables, costs nothing).
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'Modules that import each other at run time load in an order nobody chose.',
      severity: 'error',
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'domain-is-pure',
      comment: 'src/domain imports nothing of ours but src/domain: no I/O, no HTTP, no SQL.',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { path: '^src/', pathNot: '^src/domain/' },
    },
    {
      name: 'projections-below-commands-and-http',
      comment: 'Projections read and write tables from events; they issue no commands and know no HTTP.',
      severity: 'error',
      from: { path: '^src/projections/' },
      to: { path: '^src/(commands|http|cli)/' },
    },
    {
      name: 'commands-below-http',
      comment: 'Commands know nothing of HTTP.',
      severity: 'error',
      from: { path: '^src/commands/' },
      to: { path: '^src/(http|cli)/' },
    },
    {
      name: 'eventstore-is-the-base',
      comment: 'The event store knows no area: not their domain, commands, projections or HTTP.',
      severity: 'error',
      from: { path: '^src/eventstore/' },
      to: { path: '^src/(domain|commands|projections|http|cli)/' },
    },
    {
      name: 'http-not-to-cli',
      severity: 'error',
      from: { path: '^src/http/' },
      to: { path: '^src/cli/' },
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
