import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { readDemoCredentials } from '../lib/demo-tenant.ts'
import { ApiError, PortalClient } from './client.ts'
import { CliError, type Command, type Resource } from './types.ts'
import { accounts } from './accounts.ts'
import { connections } from './connections.ts'
import { keys, tokens } from './keys.ts'
import { locations } from './locations.ts'
import { domains } from './domains.ts'
import { customFields } from './custom-fields.ts'
import { integrations } from './integrations.ts'
import { deliveries, visits } from './deliveries.ts'
import { portal } from './portal.ts'

const RESOURCES: Resource[] = [accounts, connections, keys, tokens, locations, domains, customFields, integrations, deliveries, visits, portal]
const DEFAULT_PORTAL = 'http://localhost:8081'

const GLOBAL_OPTIONS: Array<[string, string]> = [
  [
    '--portal <url>',
    "portal origin (env PORTAL_URL, else PORTAL_BASE_URL or PORTAL_PORT as npm start reads them, else the local stack's, else http://localhost:8081)",
  ],
  ['--token <token>', "operator token (env OPERATOR_TOKEN, else the local stack's in DATA_DIR/demo-credentials.json)"],
  ['--help, -h', 'help for the current level'],
]

function optionLines(rows: Array<[string, string]>): string[] {
  const width = Math.max(...rows.map(([left]) => left.length))
  return rows.map(([left, help]) => `  ${left.padEnd(width)}  ${help}`)
}

export interface Io {
  out(text: string): void
  err(text: string): void
  env: Record<string, string | undefined>
}

function topHelp(): string {
  const width = Math.max(...RESOURCES.map((r) => r.name.length), 'export'.length, 'links'.length)
  return [
    'usage: npm run cli -- <resource> <verb> [args] [options]',
    '',
    "Operates the management API over HTTP. Prints JSON on success; on failure prints the API's",
    'error (and validation issues) on stderr and exits with code 1.',
    '',
    'resources:',
    ...RESOURCES.map((r) => `  ${r.name.padEnd(width)}  ${r.summary}`),
    `  ${'export'.padEnd(width)}  export data (see: export --help)`,
    `  ${'links'.padEnd(width)}  rotate the link signing key (see: links --help)`,
    '',
    'options:',
    ...optionLines(GLOBAL_OPTIONS),
    '',
    'example: npm run cli -- accounts create acme --name "Acme Inc."',
  ].join('\n')
}

function resourceHelp(r: Resource): string {
  return [
    `usage: npm run cli -- ${r.name} <verb> [args] [options]`,
    '',
    `${r.summary}`,
    '',
    'verbs:',
    ...Object.entries(r.commands).flatMap(([verb, c]) => [`  ${`${verb} ${c.usage}`.trimEnd()}`, `      ${c.summary}`]),
    '',
    `run \`npm run cli -- ${r.name} <verb> --help\` for a verb's options`,
  ].join('\n')
}

function commandHelp(r: Resource, verb: string, c: Command): string {
  const options = Object.entries(c.options ?? {})
  return [
    `usage: npm run cli -- ${r.name} ${verb} ${c.usage}${options.length ? ' [options]' : ''}`.trimEnd(),
    '',
    c.summary,
    ...(c.details ? ['', ...c.details] : []),
    '',
    'options:',
    ...optionLines([
      ...options.map(([name, o]): [string, string] => [`--${name}${o.type === 'string' ? ' <value>' : ''}`, o.required ? `${o.help} (required)` : o.help]),
      ...GLOBAL_OPTIONS,
    ]),
  ].join('\n')
}

function wantsHelp(argv: string[]): boolean {
  const end = argv.indexOf('--')
  return (end < 0 ? argv : argv.slice(0, end)).some((a) => a === '--help' || a === '-h')
}

/** Pulls `--portal` / `--token` out from anywhere before `--`, so they may precede the resource. */
function extractGlobals(argv: string[]): { rest: string[]; portal?: string; token?: string } {
  const rest: string[] = []
  const found: { portal?: string; token?: string } = {}
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    if (a === '--') {
      rest.push(...argv.slice(i))
      break
    }
    const m = /^--(portal|token)(?:=(.*))?$/s.exec(a)
    if (!m) {
      rest.push(a)
      continue
    }
    const value = m[2] ?? argv[++i]
    if (value === undefined) throw new CliError(`--${m[1]} needs a value`)
    found[m[1] as 'portal' | 'token'] = value
  }
  return { rest, ...found }
}

/** The portal origin the environment gives `npm start` (shared/src/config/config.ts portalBaseUrl). */
function portalFromEnv(env: Io['env']): string | undefined {
  if (env.PORTAL_BASE_URL) return env.PORTAL_BASE_URL
  return env.PORTAL_PORT ? `http://localhost:${env.PORTAL_PORT}` : undefined
}

/**
 * What the local stack (`npm start`, `npm run start:cloud`) wrote for the operator: its portal URL and
 * operator token, in DATA_DIR (default .data, as npm start reads it) /demo-credentials.json. So the
 * commands its banner prints work in another terminal as printed, without OPERATOR_TOKEN.
 */
function localStack(env: Io['env']): { portal_url: string; operator_token: string } | null {
  try {
    return readDemoCredentials(resolve(env.DATA_DIR || '.data'))
  } catch {
    // a half-written or foreign file: the environment and the flags still apply
    return null
  }
}

/** Runs one CLI invocation; returns the exit code. */
export async function main(rawArgv: string[], io: Io): Promise<number> {
  try {
    if (rawArgv[0] === 'export') {
      // reads the stores directly (not the API); loaded only when used, so the API commands
      // never load the store adapters
      const { runExport } = await import('./export.ts')
      return await runExport(rawArgv.slice(1))
    }
    if (rawArgv[0] === 'links') {
      // the secrets backend directly, with the operator's credentials (services may only read it)
      const { runLinks } = await import('./links.ts')
      return await runLinks(rawArgv.slice(1), io)
    }
    const globals = extractGlobals(rawArgv)
    const argv = globals.rest
    const [name, verb] = argv
    if (name === undefined || name === 'help' || ((name === '--help' || name === '-h') && argv.length === 1)) {
      if (name === undefined) {
        io.err(topHelp())
        return 1
      }
      io.out(topHelp())
      return 0
    }
    if (name.startsWith('-') && wantsHelp(argv)) {
      io.out(topHelp())
      return 0
    }
    const resource = RESOURCES.find((r) => r.name === name)
    if (!resource) throw new CliError(`unknown resource "${name}"; run with --help for the list`)
    if (verb === undefined || verb === '--help' || verb === '-h' || verb === 'help') {
      if (verb === undefined) {
        io.err(resourceHelp(resource))
        return 1
      }
      io.out(resourceHelp(resource))
      return 0
    }
    const command = resource.commands[verb]
    if (!command) throw new CliError(`unknown verb "${verb}" for ${resource.name}; verbs: ${Object.keys(resource.commands).join(', ')}`)
    if (wantsHelp(argv.slice(2))) {
      io.out(commandHelp(resource, verb, command))
      return 0
    }

    const options = {
      ...Object.fromEntries(Object.entries(command.options ?? {}).map(([n, o]) => [n, { type: o.type, ...(o.multiple ? { multiple: true } : {}) }])),
    }
    let parsed
    try {
      parsed = parseArgs({ args: argv.slice(2), options, allowPositionals: true, allowNegative: true, strict: true })
    } catch (err) {
      throw new CliError(`${(err as Error).message.replace(/\. To specify a positional.*$/s, '')}; run \`${resource.name} ${verb} --help\``)
    }
    const args = parsed.positionals
    if (args.length < command.required || (!command.variadic && args.length > command.required)) {
      throw new CliError(`usage: ${resource.name} ${verb} ${command.usage}`)
    }
    const flags = parsed.values as Record<string, string | boolean | string[] | undefined>
    for (const [name, o] of Object.entries(command.options ?? {})) {
      if (o.required && (flags[name] === undefined || flags[name] === '')) throw new CliError(`--${name} is required: ${o.help}`)
    }
    const local = localStack(io.env)
    const portal = globals.portal ?? (io.env.PORTAL_URL || portalFromEnv(io.env) || local?.portal_url || DEFAULT_PORTAL)
    const token = globals.token ?? (io.env.OPERATOR_TOKEN || local?.operator_token)
    if (!token)
      throw new CliError('no operator token: set OPERATOR_TOKEN or pass --token (a running `npm start` keeps its own in DATA_DIR/demo-credentials.json)')
    try {
      new URL(portal)
    } catch {
      throw new CliError(`--portal / PORTAL_URL is not a URL: "${portal}"`)
    }
    const result = await command.run({ client: new PortalClient(portal, token), args, flags })
    io.out(JSON.stringify(result, null, 2))
    return 0
  } catch (err) {
    if (err instanceof ApiError) {
      io.err(`error: ${err.message} (HTTP ${err.status})`)
      for (const i of err.issues ?? []) io.err(`  ${i.path}: ${i.message}`)
      return 1
    }
    if (err instanceof CliError) {
      io.err(`error: ${err.message}`)
      return 1
    }
    io.err(`error: ${(err as Error)?.stack ?? String(err)}`)
    return 1
  }
}
