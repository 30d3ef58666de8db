import type { PortalClient } from './client.ts'

/** Option declarations as `node:util` parseArgs takes them (plus a help line). */
export interface OptionSpec {
  type: 'string' | 'boolean'
  multiple?: boolean
  short?: string
  /** the command refuses to run without it (checked before any request) */
  required?: boolean
  help: string
}

export interface CommandContext {
  client: PortalClient
  /** the positional arguments after `<resource> <verb>` */
  args: string[]
  flags: Record<string, string | boolean | string[] | undefined>
}

export interface Command {
  summary: string
  /** positional argument names shown in usage, e.g. `<accountId> [domain...]` */
  usage: string
  /** how many positionals are required; `variadic` accepts more */
  required: number
  variadic?: boolean
  options?: Record<string, OptionSpec>
  /** extra lines for `--help` */
  details?: string[]
  run(ctx: CommandContext): Promise<unknown>
}

export interface Resource {
  name: string
  summary: string
  commands: Record<string, Command>
}

/** A usage or input mistake: printed to stderr with exit code 1. */
export class CliError extends Error {
  override name = 'CliError'
}
