/**
 * The layers of shared/src and who may import whom (docs/architecture.md, "Layers"). Run by
 * `npm test` (scripts/run-tests.ts) and on its own with `npx depcruise -c .dependency-cruiser.cjs shared services`.
 *
 *   model            records, ids, clock, lifetimes: imports nothing of ours
 *   foundation       lib, contract, errors, config, logging: model and each other
 *   ports            interfaces only (types): model and foundation
 *   adapters         embedded, google, outbound-http: ports, model, foundation
 *   domain           ports, model, foundation; never an adapter, http or the composition
 *   http             fastify plumbing: domain, ports, model, foundation; never an adapter
 *   platform         the composition root: anything in shared
 *   services         their own files and shared (never another service); portal-api's portal/
 *                    never imports its routes/
 */
const SRC = '^shared/src/'
const layer = (...names) => `${SRC}(${names.join('|')})/`

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'model-imports-nothing',
      severity: 'error',
      comment: 'model/ is the bottom layer',
      from: { path: layer('model') },
      to: { path: SRC, pathNot: layer('model') },
    },
    {
      name: 'foundation-stays-low',
      severity: 'error',
      comment: 'lib, contract, errors, config and logging import only model/ and each other',
      from: { path: layer('lib', 'contract', 'errors', 'config', 'logging') },
      to: { path: layer('ports', 'adapters', 'domain', 'http', 'platform') },
    },
    {
      name: 'ports-are-interfaces',
      severity: 'error',
      comment: 'ports/ holds interfaces: it imports only model/ and foundation types',
      from: { path: layer('ports') },
      to: { path: layer('adapters', 'domain', 'http', 'platform') },
    },
    {
      name: 'ports-are-types-only',
      severity: 'error',
      comment: 'a port is a type: anything that imports one imports its types (import type)',
      from: {},
      to: { path: layer('ports'), dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'adapters-below-domain',
      severity: 'error',
      comment: 'adapters implement ports; they never reach up into domain, http or the composition',
      from: { path: layer('adapters') },
      to: { path: layer('domain', 'http', 'platform') },
    },
    {
      name: 'domain-uses-ports',
      severity: 'error',
      comment: 'domain code gets adapters through PlatformDeps (ports/deps.ts), never by import',
      from: { path: layer('domain') },
      to: { path: layer('adapters', 'http', 'platform') },
    },
    {
      name: 'http-uses-domain',
      severity: 'error',
      comment: 'the HTTP layer never builds or imports an adapter (the composition root does)',
      from: { path: layer('http') },
      to: { path: layer('adapters', 'platform') },
    },
    {
      name: 'shared-is-shared',
      severity: 'error',
      comment: 'shared/ never imports a service, a script, a test or a bench',
      from: { path: '^shared/' },
      to: { path: '^(services|scripts|test|bench)/' },
    },
    {
      name: 'services-compose-through-platform',
      severity: 'error',
      comment: 'a service gets adapters from the composition root (platform/), not by import',
      from: { path: '^services/' },
      to: { path: layer('adapters') },
    },
    {
      name: 'services-are-separate',
      severity: 'error',
      comment: 'a service imports shared/, never another service',
      from: { path: '^services/([^/]+)/' },
      to: { path: '^services/', pathNot: '^services/$1/' },
    },
    {
      name: 'portal-kit-stays-out-of-routes',
      severity: 'error',
      comment: 'the portal (its screens and its kit) never imports routes/: the HTML helpers live in portal/kit',
      from: { path: '^services/portal-api/src/portal/' },
      to: { path: '^services/portal-api/src/routes/' },
    },
    {
      name: 'no-cycles',
      severity: 'error',
      comment: 'modules import each other in one direction',
      from: { path: '^(shared|services)/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'], extensions: ['.ts', '.js'] },
  },
}
