import { sampleOf, type Json } from './sample.ts'

/**
 * TypeScript source calling every operation of an OpenAPI document through openapi-fetch with
 * the types openapi-typescript generated from it (`./api` exports `paths`): one function per
 * operation, named `call_<operationId>`, with its required path, query and header parameters and
 * its request body. Type-checking the file (tsc --noEmit) fails when any call does not fit the
 * generated types. Also returns, per operation, the line range of its function, so a compiler
 * diagnostic can be named by operation.
 */
type Doc = { paths: Record<string, Record<string, any>> }
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const

export interface CallsSource {
  source: string
  /** operationId -> [first line, last line] (1-based) of its function */
  lines: Map<string, [number, number]>
  operationIds: string[]
}

const literal = (value: Json): string => JSON.stringify(value)

export function callsSource(doc: Doc): CallsSource {
  const out: string[] = [
    "import createClient from 'openapi-fetch'",
    "import type { paths } from './api'",
    '',
    "const client = createClient<paths>({ baseUrl: 'http://127.0.0.1:1' })",
    '',
  ]
  const lines = new Map<string, [number, number]>()
  const operationIds: string[] = []
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method]
      if (!op) continue
      const id = op.operationId as string
      operationIds.push(id)
      const params: Record<string, Record<string, Json>> = {}
      for (const p of [...(item.parameters ?? []), ...(op.parameters ?? [])]) {
        if (!p.required) continue
        ;(params[p.in] ??= {})[p.name] = sampleOf(doc as never, p.schema)
      }
      const init: string[] = []
      if (Object.keys(params).length > 0) init.push(`params: ${literal(params as Json)}`)
      const json = op.requestBody?.content?.['application/json']
      if (json && op.requestBody.required) init.push(`body: ${literal(sampleOf(doc as never, json.schema))}`)
      const start = out.length + 1
      out.push(`export async function call_${id}() {`)
      out.push(`  const { data, error, response } = await client.${method.toUpperCase()}(${literal(path)}${init.length > 0 ? `, { ${init.join(', ')} }` : ''})`)
      out.push('  return { data, error, status: response.status }')
      out.push('}')
      lines.set(id, [start, out.length])
      out.push('')
    }
  }
  return { source: out.join('\n'), lines, operationIds }
}
