/**
 * A small valid value of a JSON Schema (OpenAPI 3.1) as TypeScript source, to write calls a
 * generated client must accept: required members only, the first branch of a union, the first
 * enum value, a string shaped by its format. Local `$ref`s are resolved against the document.
 */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
type Schema = Record<string, any>

const FORMAT_SAMPLES: Record<string, string> = {
  uuid: '00000000-0000-4000-8000-000000000000',
  'date-time': '2026-09-04T12:00:00.000Z',
  date: '2026-09-04',
  uri: 'https://example.com/',
  email: 'someone@example.com',
}

function resolve(doc: Schema, schema: Schema): Schema {
  let s = schema
  for (let depth = 0; typeof s.$ref === 'string'; depth++) {
    if (depth > 20 || !s.$ref.startsWith('#/')) throw new Error(`cannot resolve ${s.$ref}`)
    s = s.$ref
      .slice(2)
      .split('/')
      .reduce((node: Schema, part: string) => node[part.replaceAll('~1', '/').replaceAll('~0', '~')], doc)
  }
  return s
}

export function sampleOf(doc: Schema, schema: Schema | undefined, depth = 0): Json {
  if (!schema || depth > 12) return null
  const s = resolve(doc, schema)
  if ('const' in s) return s.const as Json
  if (Array.isArray(s.enum)) return s.enum[0] as Json
  if ('default' in s && s.type !== 'object') return s.default as Json
  const union = s.anyOf ?? s.oneOf
  // a union of whole schemas (`string | null`): its first non-null branch
  if (Array.isArray(union) && union.every((b: Schema) => b.type !== undefined || b.$ref !== undefined)) {
    const branch = union.find((b: Schema) => resolve(doc, b).type !== 'null') ?? union[0]
    return sampleOf(doc, branch, depth + 1)
  }
  const type = Array.isArray(s.type) ? s.type.find((t: string) => t !== 'null') : s.type
  switch (type ?? (s.properties ? 'object' : undefined)) {
    case 'object': {
      // an object's own required members, plus those of its `allOf` parts and of the first branch
      // of a union among them (MintLinkBody: `allOf: [{anyOf: [{required: [contactId]}, …]}]`)
      const parts: Schema[] = [s]
      for (let i = 0; i < parts.length; i++) {
        const part = resolve(doc, parts[i]!)
        if (i > 0) parts[i] = part
        for (const sub of part.allOf ?? []) parts.push(sub)
        const branches = part === s ? undefined : (part.anyOf ?? part.oneOf)
        if (Array.isArray(branches) && branches.length > 0) parts.push(branches[0])
      }
      const properties: Record<string, Schema> = Object.assign({}, ...parts.map((p) => p.properties ?? {}))
      const required = new Set<string>(parts.flatMap((p) => (p.required ?? []) as string[]))
      const out: Record<string, Json> = {}
      for (const name of required) out[name] = sampleOf(doc, properties[name] ?? {}, depth + 1)
      return out
    }
    case 'array': {
      const n = Math.max(0, s.minItems ?? 0)
      return Array.from({ length: n }, () => sampleOf(doc, s.items ?? {}, depth + 1))
    }
    case 'string': {
      const base = FORMAT_SAMPLES[s.format as string] ?? 'x'
      return base.length >= (s.minLength ?? 0) ? base : base.padEnd(s.minLength, 'x')
    }
    case 'integer':
    case 'number':
      return s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : 1)
    case 'boolean':
      return true
    case 'null':
      return null
    default:
      return {}
  }
}
