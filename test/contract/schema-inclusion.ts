/**
 * A structural check that one JSON Schema accepts no more than another (`narrow ⊆ wide`: every
 * instance `narrow` accepts, `wide` accepts too), for the keywords our wire schemas use. It is
 * sound, not complete: it answers "proven" only through the rules below, and reports every place
 * where it could not prove the inclusion (a real widening, or a keyword it does not reason about).
 *
 * Rules (annotations — title, description, default, examples, $comment — are ignored):
 * - anything ⊆ a schema without constraints (`{}`, `true`); `false` ⊆ anything;
 * - equal constraints;
 * - `narrow` with anyOf: every branch ⊆ wide (or the rest of narrow ⊆ wide);
 * - `wide` with anyOf: narrow ⊆ one of its branches (and ⊆ the rest of wide);
 * - objects: wide's `required` ⊆ narrow's; each property, and every other key (through
 *   `additionalProperties`, absent = anything), checked member by member;
 * - arrays: `items` checked recursively;
 * - `enum`: a subset, or a `const` in it; `type`, `format`, `const` and any other keyword of
 *   wide: the same value in narrow. A keyword only narrow has adds a constraint, so it can only
 *   narrow further, except `patternProperties` and `prefixItems`, which change what
 *   `additionalProperties` and `items` mean: those are reported.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
type Schema = boolean | { [key: string]: Json }

const ANNOTATIONS = new Set(['title', 'description', 'default', 'examples', '$comment', 'deprecated', 'readOnly', 'writeOnly'])
/** keywords whose value maps names to schemas: their keys are names, not keywords */
const NAME_MAPS = new Set(['properties', '$defs', 'patternProperties', 'dependentSchemas'])
const UNREASONED = ['patternProperties', 'prefixItems']

/** Plain JSON without annotations (TypeBox's non-enumerable bookkeeping goes too). */
export function stripAnnotations(value: unknown, isNameMap = false): Json {
  if (Array.isArray(value)) return value.map((v) => stripAnnotations(v))
  if (value === null || typeof value !== 'object') return value as Json
  const out: { [key: string]: Json } = {}
  for (const [key, v] of Object.entries(value)) {
    if (!isNameMap && ANNOTATIONS.has(key)) continue
    out[key] = stripAnnotations(v, !isNameMap && NAME_MAPS.has(key))
  }
  return out
}

/** The schema with every internal `#/$defs/<name>` reference replaced by the definition (no cycles expected). */
export function inlineRefs(node: unknown, defs: Record<string, unknown>, depth = 0): unknown {
  if (depth > 64) throw new Error('inlineRefs: reference cycle')
  if (Array.isArray(node)) return node.map((v) => inlineRefs(v, defs, depth))
  if (node === null || typeof node !== 'object') return node
  const ref = (node as { $ref?: unknown }).$ref
  if (typeof ref === 'string') {
    const name = ref.startsWith('#/$defs/') ? ref.slice('#/$defs/'.length) : null
    if (name === null || !(name in defs)) throw new Error(`inlineRefs: unresolvable ${ref}`)
    const { $ref: _ref, ...siblings } = node as Record<string, unknown>
    return inlineRefs({ ...(defs[name] as object), ...siblings }, defs, depth + 1)
  }
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, inlineRefs(v, defs, depth)]))
}

const isObject = (s: Json | undefined): s is { [key: string]: Json } => s !== null && typeof s === 'object' && !Array.isArray(s)
const same = (a: unknown, b: unknown) => JSON.stringify(sortKeys(a)) === JSON.stringify(sortKeys(b))
function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys)
  if (v === null || typeof v !== 'object') return v
  return Object.fromEntries(
    Object.keys(v)
      .sort()
      .map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]),
  )
}
const without = (s: { [key: string]: Json }, key: string): { [key: string]: Json } => {
  const { [key]: _dropped, ...rest } = s
  return rest
}

/** Where `narrow ⊆ wide` could not be shown; empty when it is proven. Both are stripped of annotations first. */
export function inclusionGaps(narrow: unknown, wide: unknown): string[] {
  return gaps(stripAnnotations(narrow) as Schema, stripAnnotations(wide) as Schema, '#')
}

function gaps(n: Schema | undefined, w: Schema | undefined, at: string): string[] {
  // an absent subschema (additionalProperties, items) constrains nothing
  const narrow: Schema = n === undefined ? true : n
  const wide: Schema = w === undefined ? true : w
  if (wide === true || (isObject(wide) && Object.keys(wide).length === 0)) return []
  if (narrow === false) return []
  if (wide === false) return [`${at}: wide accepts nothing here, narrow accepts something`]
  if (narrow === true) return [`${at}: narrow accepts anything here, wide constrains it`]
  if (same(narrow, wide)) return []
  for (const k of UNREASONED) if (k in narrow || k in wide) return [`${at}: ${k} is not reasoned about`]

  if (Array.isArray(narrow.anyOf)) {
    const branches = narrow.anyOf as Schema[]
    const rest = without(narrow, 'anyOf')
    if (branches.every((b) => gaps({ ...rest, ...(b as object) }, wide, at).length === 0)) return []
    if (Object.keys(rest).length > 0 && gaps(rest, wide, at).length === 0) return []
    return [`${at}: a branch of narrow's anyOf is not within wide`]
  }
  if (Array.isArray(wide.anyOf)) {
    const rest = without(wide, 'anyOf')
    const restGaps = Object.keys(rest).length > 0 ? gaps(narrow, rest, at) : []
    const fits = (wide.anyOf as Schema[]).some((b) => gaps(narrow, b, at).length === 0)
    return fits ? restGaps : [...restGaps, `${at}: narrow is within no branch of wide's anyOf`]
  }

  const out: string[] = []
  const objectKeywords = ['properties', 'required', 'additionalProperties']
  if (objectKeywords.some((k) => k in wide)) out.push(...objectGaps(narrow, wide, at))
  for (const [key, value] of Object.entries(wide)) {
    if (objectKeywords.includes(key)) continue
    if (key === 'items') out.push(...gaps(narrow.items as Schema | undefined, value as Schema, `${at}/items`))
    else if (key === 'enum') {
      const allowed = value as Json[]
      const mine = Array.isArray(narrow.enum) ? narrow.enum : 'const' in narrow ? [narrow.const!] : null
      if (mine === null || !mine.every((v) => allowed.some((a) => same(a, v)))) out.push(`${at}/enum: narrow allows a value outside wide's enum`)
    } else if (!(key in narrow) || !same(narrow[key], value)) out.push(`${at}/${key}: narrow does not state wide's ${JSON.stringify(value)}`)
  }
  return out
}

function objectGaps(narrow: { [key: string]: Json }, wide: { [key: string]: Json }, at: string): string[] {
  const out: string[] = []
  const nRequired = new Set((narrow.required ?? []) as string[])
  for (const r of (wide.required ?? []) as string[]) if (!nRequired.has(r)) out.push(`${at}/required: narrow does not require ${r}`)
  const nProps = (isObject(narrow.properties) ? narrow.properties : {}) as Record<string, Schema>
  const wProps = (isObject(wide.properties) ? wide.properties : {}) as Record<string, Schema>
  const nExtra = narrow.additionalProperties as Schema | undefined
  const wExtra = wide.additionalProperties as Schema | undefined
  for (const name of new Set([...Object.keys(nProps), ...Object.keys(wProps)])) {
    const n = name in nProps ? nProps[name] : nExtra
    const w = name in wProps ? wProps[name] : wExtra
    out.push(...gaps(n, w, `${at}/properties/${name}`))
  }
  out.push(...gaps(nExtra, wExtra, `${at}/additionalProperties`))
  return out
}
