import { parse } from '@cdktf/hcl2json'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * The tree whose deployment files are checked: this repository, or another checkout given in
 * LSV_CHECK_ROOT (used to see each invariant fail on an older tree, e.g. `git archive` of a
 * commit before a fix).
 */
export const CHECK_ROOT = process.env.LSV_CHECK_ROOT ?? join(import.meta.dirname, '..', '..')
export const INFRA_DIR = join(CHECK_ROOT, 'infra')
/** this repository (its code, which the deployment files must match) */
export const ROOT = join(import.meta.dirname, '..', '..')

type Blocks = Record<string, Record<string, Array<Record<string, unknown>>>>

export interface Terraform {
  resource: Blocks
  /** ephemeral resources (values that never reach state) */
  ephemeral: Blocks
  variable: Record<string, Array<Record<string, unknown>>>
  output: Record<string, Array<Record<string, unknown>>>
  locals: Array<Record<string, unknown>>
  data: Blocks
  /** the `terraform {}` blocks (required_version, required_providers, backend) */
  terraform: Array<Record<string, unknown>>
  /** the raw text of every .tf file, by file name */
  text: Record<string, string>
}

/** Parses every .tf file of a directory (infra/ by default) into one merged JSON view (hcl2json). */
export async function loadTerraform(dir = INFRA_DIR): Promise<Terraform> {
  const out: Terraform = { resource: {}, ephemeral: {}, variable: {}, output: {}, locals: [], data: {}, terraform: [], text: {} }
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.tf'))
    .sort()) {
    const text = readFileSync(join(dir, file), 'utf8')
    out.text[file] = text
    const json = (await parse(file, text)) as Record<string, unknown>
    for (const [kind, value] of Object.entries(json)) {
      if (kind === 'resource' || kind === 'data' || kind === 'ephemeral') {
        for (const [type, named] of Object.entries(value as Blocks)) {
          out[kind][type] ??= {}
          Object.assign(out[kind][type], named)
        }
      } else if (kind === 'variable' || kind === 'output') {
        Object.assign(out[kind], value)
      } else if (kind === 'locals') {
        out.locals.push(...(value as Array<Record<string, unknown>>))
      } else if (kind === 'terraform') {
        out.terraform.push(...(value as Array<Record<string, unknown>>))
      }
    }
  }
  return out
}

/** The single body of resource TYPE.NAME. */
export function resource(tf: Terraform, type: string, name: string): Record<string, unknown> {
  const body = tf.resource[type]?.[name]?.[0]
  if (!body) throw new Error(`resource ${type}.${name} not found in infra/`)
  return body
}

/** Every managed resource as [address "type.name", body]. */
export function resources(tf: Terraform): Array<[string, Record<string, unknown>]> {
  return Object.entries(tf.resource).flatMap(([type, named]) =>
    Object.entries(named).map(([name, [body]]) => [`${type}.${name}`, body!] as [string, Record<string, unknown>]),
  )
}

/** The expression of local.NAME (as hcl2json writes it), or undefined. */
export function localExpr(tf: Terraform, name: string): unknown {
  for (const block of tf.locals) if (Object.hasOwn(block, name)) return block[name]
  return undefined
}

export function allText(tf: Terraform): string {
  return Object.values(tf.text).join('\n')
}

const ADDRESS = /\b((?:google|google-beta|random|time)_[a-z0-9_]+|time_sleep)\.([a-z0-9_]+)\b/g
const LOCAL = /\blocal\.([a-z0-9_]+)\b/g

/**
 * The resources an expression refers to, as "type.name": directly, through depends_on, and
 * through every local it reads (followed to the end). This is Terraform's own ordering: a
 * resource is created after everything it refers to.
 */
export function references(tf: Terraform, value: unknown, seenLocals = new Set<string>()): Set<string> {
  const text = JSON.stringify(value)
  const out = new Set<string>()
  for (const m of text.matchAll(ADDRESS)) {
    if (tf.resource[m[1]!]?.[m[2]!]) out.add(`${m[1]}.${m[2]}`)
  }
  for (const m of text.matchAll(LOCAL)) {
    const name = m[1]!
    if (seenLocals.has(name)) continue
    seenLocals.add(name)
    for (const r of references(tf, localExpr(tf, name), seenLocals)) out.add(r)
  }
  return out
}

/** Everything a resource is ordered after, transitively. */
export function dependsOnTransitively(tf: Terraform, address: string): Set<string> {
  const seen = new Set<string>()
  const queue = [address]
  while (queue.length > 0) {
    const next = queue.pop()!
    const [type, name] = next.split('.') as [string, string]
    const body = tf.resource[type]?.[name]?.[0]
    if (!body) continue
    for (const r of references(tf, body)) {
      if (!seen.has(r)) {
        seen.add(r)
        queue.push(r)
      }
    }
  }
  seen.delete(address)
  return seen
}
