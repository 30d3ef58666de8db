import { canonicalUuid } from '../lib/uuid.ts'

/**
 * UUIDs in either case (RFC 9562: read case-insensitively, written lower case; lib/uuid.ts).
 *
 * Why: every UUID the platform makes is stored lower case (contact ids from `contactIdFor`,
 * account ids from `randomUUID`, shared/src/model/ids.ts) and stores compare ids exactly, while
 * `format: uuid` accepts either case. An upper-case id of a stored record passed validation and
 * then matched nothing (404 `contact not found`, `not found`). Route validation is the one step
 * every request part crosses, so it lower-cases there (route-schema-compilers.ts): a handler,
 * the domain and an answer that echoes the id only ever see the stored form.
 *
 * Only strings at a place the route schema declares `format: uuid` and that are UUIDs are
 * changed. Other ids (`public_id`, `external_id`, `src_…`/`key_…`/`int_…` ids, location ids)
 * keep their case: some are case-sensitive (base64url), and what they mean is not ours to change.
 */

/** Returns the value with its UUIDs canonical (lib/uuid.ts); objects and arrays are changed in place. */
type Fix = (value: unknown) => unknown

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

const lowerCaseUuid: Fix = (value) => (typeof value === 'string' ? canonicalUuid(value) : value)

/** the fixes of an object's declared properties, or none */
function propertiesFix(schema: Record<string, unknown>): Fix | undefined {
  if (!isObject(schema.properties)) return undefined
  const fixes: Array<[string, Fix]> = []
  for (const [name, property] of Object.entries(schema.properties)) {
    const fix = uuidFixFor(property)
    if (fix) fixes.push([name, fix])
  }
  if (fixes.length === 0) return undefined
  return (value) => {
    if (!isObject(value)) return value
    for (const [name, fix] of fixes) {
      if (Object.hasOwn(value, name)) value[name] = fix(value[name])
    }
    return value
  }
}

/** the fix of an array's items (one schema for all of them), or none */
function itemsFix(schema: Record<string, unknown>): Fix | undefined {
  const fix = uuidFixFor(schema.items)
  if (!fix) return undefined
  return (value) => {
    if (Array.isArray(value)) for (let i = 0; i < value.length; i++) value[i] = fix(value[i])
    return value
  }
}

/**
 * What lower-cases the UUIDs of a value valid against `schema`, or undefined when the schema
 * declares none (then nothing is done at all). The branches of `anyOf`/`oneOf`/`allOf` are each
 * applied: a branch the value does not match changes only strings that are UUIDs at a place
 * that branch declares one, which is still a UUID.
 */
export function uuidFixFor(schema: unknown): Fix | undefined {
  if (!isObject(schema)) return undefined
  const fixes: Fix[] = []
  if (schema.format === 'uuid') fixes.push(lowerCaseUuid)
  const properties = propertiesFix(schema)
  if (properties) fixes.push(properties)
  const items = itemsFix(schema)
  if (items) fixes.push(items)
  for (const keyword of ['anyOf', 'oneOf', 'allOf'] as const) {
    const branches = schema[keyword]
    if (!Array.isArray(branches)) continue
    for (const branch of branches) {
      const fix = uuidFixFor(branch)
      if (fix) fixes.push(fix)
    }
  }
  if (fixes.length === 0) return undefined
  if (fixes.length === 1) return fixes[0]
  return (value) => fixes.reduce((v, fix) => fix(v), value)
}
