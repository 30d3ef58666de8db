import { readFileSync } from 'node:fs'
import { CliError } from './types.ts'

type Flags = Record<string, string | boolean | string[] | undefined>

export function str(flags: Flags, name: string): string | undefined {
  const v = flags[name]
  return typeof v === 'string' ? v : undefined
}

/** `a,b c` -> ['a', 'b', 'c'] (commas or blanks separate; repeated flags add up) */
export function list(flags: Flags, name: string): string[] | undefined {
  const v = flags[name]
  if (v === undefined || typeof v === 'boolean') return undefined
  return (Array.isArray(v) ? v : [v]).flatMap((s) => s.split(/[,\s]+/)).filter((s) => s !== '')
}

export function int(flags: Flags, name: string): number | undefined {
  const v = str(flags, name)
  if (v === undefined) return undefined
  if (!/^-?\d+$/.test(v)) throw new CliError(`--${name} must be an integer (got "${v}")`)
  return Number(v)
}

/** A pair of boolean flags such as `--active` / `--inactive`: undefined when neither is given. */
export function either(flags: Flags, yes: string, no: string): boolean | undefined {
  if (flags[yes] === true && flags[no] === true) throw new CliError(`--${yes} and --${no} exclude each other`)
  if (flags[yes] === true) return true
  if (flags[no] === true) return false
  return undefined
}

/** `--no-x` (parseArgs negation) or `--x`: undefined when not given. */
export function bool(flags: Flags, name: string): boolean | undefined {
  const v = flags[name]
  return typeof v === 'boolean' ? v : undefined
}

export function tiers(flags: Flags, name: string): number[] | undefined {
  const values = list(flags, name)
  if (values === undefined) return undefined
  return values.map((t) => {
    if (!/^[0-9]+$/.test(t)) throw new CliError(`--${name} takes tier numbers like 1,2,3 (got "${t}")`)
    return Number(t)
  })
}

/** `--map from=to` (repeatable) or `--map a=email,b=title` -> [{from, to}] */
export function mappings(flags: Flags, name: string): Array<{ from: string; to: string }> | undefined {
  const values = list(flags, name)
  if (values === undefined) return undefined
  return values.map((pair) => {
    const i = pair.lastIndexOf('=')
    if (i <= 0 || i === pair.length - 1) throw new CliError(`--${name} takes from=to pairs (got "${pair}")`)
    return { from: pair.slice(0, i), to: pair.slice(i + 1) }
  })
}

/** A JSON argument given inline, as `@file`, or `-` for standard input. */
export function jsonArgument(raw: string): unknown {
  let text = raw
  if (raw === '-') text = readFileSync(0, 'utf8')
  else if (raw.startsWith('@')) text = readFileSync(raw.slice(1), 'utf8')
  try {
    return JSON.parse(text)
  } catch (err) {
    throw new CliError(`not valid JSON: ${(err as Error).message}`)
  }
}

/** Drops undefined members so the body carries only what was given. */
export function defined<T extends Record<string, unknown>>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>
}
