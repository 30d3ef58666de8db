import { parse } from '@cdktf/hcl2json'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

export const INFRA_DIR = join(import.meta.dirname, '..', '..', 'infra')

type Blocks = Record<string, Record<string, Array<Record<string, unknown>>>>

export interface Terraform {
  resource: Blocks
  variable: Record<string, Array<Record<string, unknown>>>
  output: Record<string, Array<Record<string, unknown>>>
  locals: Array<Record<string, unknown>>
  data: Blocks
  /** the raw text of every .tf file, by file name */
  text: Record<string, string>
}

/** Parses every .tf file of infra/ into one merged JSON view (hcl2json). */
export async function loadTerraform(): Promise<Terraform> {
  const out: Terraform = { resource: {}, variable: {}, output: {}, locals: [], data: {}, text: {} }
  for (const file of readdirSync(INFRA_DIR).filter((f) => f.endsWith('.tf')).sort()) {
    const text = readFileSync(join(INFRA_DIR, file), 'utf8')
    out.text[file] = text
    const json = (await parse(file, text)) as Record<string, unknown>
    for (const [kind, value] of Object.entries(json)) {
      if (kind === 'resource' || kind === 'data') {
        for (const [type, named] of Object.entries(value as Blocks)) {
          out[kind][type] ??= {}
          Object.assign(out[kind][type], named)
        }
      } else if (kind === 'variable' || kind === 'output') {
        Object.assign(out[kind], value)
      } else if (kind === 'locals') {
        out.locals.push(...(value as Array<Record<string, unknown>>))
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

export function allText(tf: Terraform): string {
  return Object.values(tf.text).join('\n')
}
