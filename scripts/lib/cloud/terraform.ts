/**
 * infra/ as values: parses every .tf file with @cdktf/hcl2json, parses every expression in it with
 * Terraform's own parser up front (hcl-expr.ts; the parser is async, evaluation is not) and
 * evaluates, on demand, the locals, variables, resources and data sources that start:cloud reads.
 * What a real apply would only know afterwards is faked the way Google computes it (a service
 * account's email, a topic's id, the project number); `overrides` replace whole locals (the Cloud
 * Run URLs become the local services' addresses). Values are memoised; a reference cycle or an
 * unsupported form throws.
 */
import { parse } from '@cdktf/hcl2json'
import { randomBytes } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { evaluate, HclError, isPlainObject, iterate, LazyObject, parseTemplates, type Expr, type HclValue, type Scope, type Step } from './hcl-expr.ts'

type Raw = unknown
type Blocks = Record<string, Record<string, Raw[]>>

export interface TerraformInputs {
  /** values of variables (a variable without one falls back to its default; none at all throws) */
  variables: Record<string, HclValue>
  /** whole locals replaced by these values before anything reads them */
  overrides?: Record<string, HclValue>
  /** `data.google_project.<name>.number` (the project number is only known in Google Cloud) */
  projectNumber: string
  /** `google_cloud_run_v2_service.<r>[name].uri`, as the local address of that service */
  serviceUri?(name: string): string
}

interface Resource {
  type: string
  name: string
  /** instance key → attributes (a resource without for_each has one instance, key null) */
  instances(): Array<{ key: string | null; attrs: LazyObject }>
}

interface ParsedModule {
  dir: string
  locals: Map<string, Raw>
  variables: Map<string, Record<string, Raw>>
  resources: Blocks
  data: Blocks
  ephemeral: Blocks
}

async function parseModule(dir: string): Promise<ParsedModule> {
  const out: ParsedModule = { dir, locals: new Map(), variables: new Map(), resources: {}, data: {}, ephemeral: {} }
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.tf'))
    .sort()) {
    const json = (await parse(file, readFileSync(join(dir, file), 'utf8'))) as Record<string, unknown>
    for (const [kind, value] of Object.entries(json)) {
      if (kind === 'locals') {
        for (const block of value as Array<Record<string, Raw>>) {
          for (const [name, expr] of Object.entries(block)) {
            if (out.locals.has(name)) throw new HclError(`local.${name} is declared twice (${file})`)
            out.locals.set(name, expr)
          }
        }
      } else if (kind === 'variable') {
        for (const [name, blocks] of Object.entries(value as Record<string, Array<Record<string, Raw>>>)) {
          // as `terraform validate` would: a name declared twice is an error, not the first one
          if (out.variables.has(name) || blocks.length > 1) throw new HclError(`variable "${name}" is declared more than once (${file})`)
          out.variables.set(name, blocks[0]!)
        }
      } else if (kind === 'resource' || kind === 'data' || kind === 'ephemeral') {
        const target = kind === 'resource' ? out.resources : out[kind]
        for (const [type, named] of Object.entries(value as Blocks)) {
          target[type] ??= {}
          for (const [name, body] of Object.entries(named)) {
            if (target[type][name] || body.length > 1) throw new HclError(`${kind} ${type}.${name} is declared twice (${file})`)
            target[type][name] = body
          }
        }
      }
    }
  }
  return out
}

/** Google's computed attributes, for the resource types start:cloud meets. */
function computed(type: string, attr: string, get: (a: string) => HclValue, project: string, projectNumber: string): HclValue | undefined {
  const s = (a: string) => {
    const v = get(a)
    if (typeof v !== 'string') throw new HclError(`${type}.${a} is not a string`)
    return v
  }
  switch (type) {
    case 'google_service_account': {
      if (!['email', 'member', 'name', 'id', 'unique_id'].includes(attr)) return undefined
      const email = `${s('account_id')}@${project}.iam.gserviceaccount.com`
      if (attr === 'email') return email
      if (attr === 'member') return `serviceAccount:${email}`
      if (attr === 'name' || attr === 'id') return `projects/${project}/serviceAccounts/${email}`
      if (attr === 'unique_id') return '100000000000000000000'
      return undefined
    }
    case 'google_pubsub_topic':
      if (attr === 'id') return `projects/${project}/topics/${s('name')}`
      return undefined
    case 'google_pubsub_subscription':
      if (attr === 'id') return `projects/${project}/subscriptions/${s('name')}`
      return undefined
    case 'google_secret_manager_secret':
      if (attr === 'id') return `projects/${project}/secrets/${s('secret_id')}`
      if (attr === 'name') return `projects/${projectNumber}/secrets/${s('secret_id')}`
      return undefined
    case 'google_project_iam_custom_role':
      if (attr === 'id' || attr === 'name') return `projects/${project}/roles/${s('role_id')}`
      return undefined
    case 'google_cloud_tasks_queue':
      if (attr === 'id') return `projects/${project}/locations/${s('location')}/queues/${s('name')}`
      return undefined
    case 'google_bigquery_dataset':
      if (attr === 'id') return `projects/${project}/datasets/${s('dataset_id')}`
      return undefined
    case 'google_bigquery_table':
      if (attr === 'id') return `projects/${project}/datasets/${s('dataset_id')}/tables/${s('table_id')}`
      return undefined
    case 'random_password': {
      if (attr !== 'result') return undefined
      const length = get('length')
      if (typeof length !== 'number') throw new HclError('random_password.length is not a number')
      const special = (() => {
        try {
          return get('special') !== false
        } catch {
          return true
        }
      })()
      const alphabet = `ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789${special ? '!@#$%&*()-_=+[]{}<>:?' : ''}`
      return [...randomBytes(length)].map((b) => alphabet[b % alphabet.length]).join('')
    }
    case 'random_bytes': {
      if (attr !== 'base64' && attr !== 'hex') return undefined
      const length = get('length')
      if (typeof length !== 'number') throw new HclError('random_bytes.length is not a number')
      if (attr === 'base64') return randomBytes(length).toString('base64')
      if (attr === 'hex') return randomBytes(length).toString('hex')
      return undefined
    }
    default:
      return undefined
  }
}

export interface TerraformModule {
  dir: string
  /** the value of `local.<name>` */
  local(name: string): HclValue
  variable(name: string): HclValue
  /** every resource of a type (in declaration order of names) */
  resources(type: string): Resource[]
  /** the unevaluated hcl2json body of a resource (which attributes and blocks it sets) */
  rawBody(type: string, name: string): Record<string, unknown>
  /** evaluates a raw hcl2json value of this module (templates, blocks, lists; their strings were parsed on loading), with optional `each` */
  evaluateRaw(raw: Raw, each?: { key: HclValue; value: HclValue }, where?: string): HclValue
}

/** Every string hcl2json gave (each one a template), parsed; one that does not parse throws only when evaluated. */
async function parseExpressions(mod: ParsedModule): Promise<Map<string, Expr | HclError>> {
  const strings = new Set<string>()
  const collect = (value: Raw): void => {
    if (typeof value === 'string') strings.add(value)
    else if (Array.isArray(value)) value.forEach(collect)
    else if (typeof value === 'object' && value !== null) Object.values(value).forEach(collect)
  }
  for (const value of mod.locals.values()) collect(value)
  for (const decl of mod.variables.values()) collect(decl.default)
  for (const blocks of [mod.resources, mod.data, mod.ephemeral]) collect(blocks)
  return parseTemplates(strings)
}

export async function loadTerraform(dir: string, inputs: TerraformInputs): Promise<TerraformModule> {
  const mod = await parseModule(dir)
  const expressions = await parseExpressions(mod)
  const expression = (source: string): Expr => {
    const parsed = expressions.get(source)
    if (parsed === undefined) throw new HclError(`${JSON.stringify(source)} is not an expression read from infra/`)
    if (parsed instanceof HclError) throw parsed
    return parsed
  }
  const localValues = new Map<string, HclValue>(Object.entries(inputs.overrides ?? {}))
  for (const name of localValues.keys()) {
    if (!mod.locals.has(name)) throw new HclError(`override of local.${name}: infra/ declares no such local`)
  }
  const evaluating = new Set<string>()
  const resourceCache = new Map<string, HclValue>()
  const memo = <T extends HclValue>(key: string, compute: () => T): T => {
    if (resourceCache.has(key)) return resourceCache.get(key) as T
    if (evaluating.has(key)) throw new HclError(`reference cycle through ${key}`)
    evaluating.add(key)
    try {
      const v = compute()
      resourceCache.set(key, v)
      return v
    } finally {
      evaluating.delete(key)
    }
  }

  const project = () => {
    const p = variable('project_id')
    if (typeof p !== 'string') throw new HclError('var.project_id is not a string')
    return p
  }

  function variable(name: string): HclValue {
    if (Object.hasOwn(inputs.variables, name)) {
      if (!mod.variables.has(name)) throw new HclError(`a value is given for var.${name}, which infra/ does not declare`)
      return inputs.variables[name]!
    }
    const decl = mod.variables.get(name)
    if (!decl) throw new HclError(`var.${name} is not declared in infra/`)
    if (!Object.hasOwn(decl, 'default')) throw new HclError(`var.${name} has no default and no local value`)
    return raw(decl.default, undefined, `var.${name}`)
  }

  function local(name: string): HclValue {
    if (localValues.has(name)) return localValues.get(name)!
    if (!mod.locals.has(name)) throw new HclError(`local.${name} is not declared in infra/`)
    return memo(`local.${name}`, () => {
      const v = raw(mod.locals.get(name), undefined, `local.${name}`)
      localValues.set(name, v)
      return v
    })
  }

  /** One block body's attribute as a value (`each` set for for_each instances). */
  function instanceAttrs(
    kind: string,
    type: string,
    body: Record<string, Raw>,
    each: { key: HclValue; value: HclValue } | undefined,
    label: string,
  ): LazyObject {
    const obj: LazyObject = new LazyObject(label, (attr) => {
      const fake = computed(type, attr, (a) => obj.get(a), kind === 'data' ? '' : project(), inputs.projectNumber)
      if (fake !== undefined) return fake
      if (type === 'google_cloud_run_v2_service' && attr === 'uri') {
        if (!inputs.serviceUri) throw new HclError(`${label}.uri: no local address for Cloud Run services`)
        const n = obj.get('name')
        if (typeof n !== 'string') throw new HclError(`${label}.name is not a string`)
        return inputs.serviceUri(n)
      }
      if (kind === 'data' && type === 'google_project') {
        if (attr === 'number') return inputs.projectNumber
        if (attr === 'project_id') return body.project_id === undefined ? project() : raw(body.project_id, each, `${label}.project_id`)
      }
      if (!Object.hasOwn(body, attr)) throw new HclError(`${label}.${attr} is neither set in infra/ nor an attribute start:cloud knows how to compute`)
      if (attr === 'dynamic') throw new HclError(`${label}: dynamic blocks are not supported`)
      return raw(body[attr], each, `${label}.${attr}`)
    })
    return obj
  }

  function blocksOf(kind: 'resource' | 'data' | 'ephemeral'): Blocks {
    return kind === 'resource' ? mod.resources : mod[kind]
  }

  /** A resource (or data source) as its reference evaluates: one instance, or a map of them by for_each key. */
  function referenceValue(kind: 'resource' | 'data' | 'ephemeral', type: string, name: string): HclValue {
    const body = blocksOf(kind)[type]?.[name]?.[0] as Record<string, Raw> | undefined
    if (!body) throw new HclError(`${kind === 'resource' ? '' : `${kind}.`}${type}.${name} is not declared in infra/`)
    const label = `${kind === 'resource' ? '' : `${kind}.`}${type}.${name}`
    return memo(`${kind}:${type}.${name}`, () => {
      if (Object.hasOwn(body, 'count')) throw new HclError(`${label}: count is not supported (use for_each)`)
      if (!Object.hasOwn(body, 'for_each')) return instanceAttrs(kind, type, body, undefined, label)
      const collection = raw(body.for_each, undefined, `${label}.for_each`)
      const out: Record<string, HclValue> = {}
      for (const [k, v] of iterate(collection, `${label}.for_each`)) {
        // for_each over a set: key and value are the element; over a map: the key and its value
        const key = Array.isArray(collection) ? v : k
        if (typeof key !== 'string') throw new HclError(`${label}.for_each: keys must be strings`)
        out[key] = instanceAttrs(kind, type, body, { key, value: v }, `${label}[${JSON.stringify(key)}]`)
      }
      return out
    })
  }

  function scopeFor(each: { key: HclValue; value: HclValue } | undefined): Scope {
    return {
      reference(root: string, steps: Step[]) {
        const attr = (i: number) => {
          const s = steps[i]
          if (!s || s.kind !== 'attr') throw new HclError(`${root}: expected .name after it`)
          return s.name
        }
        switch (root) {
          case 'var':
            return { value: variable(attr(0)), used: 1 }
          case 'local':
            return { value: local(attr(0)), used: 1 }
          case 'each': {
            if (!each) throw new HclError('each. is used outside a for_each resource')
            const a = attr(0)
            if (a === 'key') return { value: each.key, used: 1 }
            if (a === 'value') return { value: each.value, used: 1 }
            throw new HclError(`each.${a} does not exist`)
          }
          case 'path': {
            const a = attr(0)
            if (a === 'module' || a === 'root') return { value: mod.dir, used: 1 }
            throw new HclError(`path.${a} is not supported`)
          }
          case 'data':
          case 'ephemeral':
            return { value: referenceValue(root, attr(0), attr(1)), used: 2 }
          case 'count':
          case 'self':
          case 'terraform':
            throw new HclError(`${root}. references are not supported`)
          default:
            if (mod.resources[root]) return { value: referenceValue('resource', root, attr(0)), used: 1 }
            throw new HclError(`unknown reference ${root}${steps[0]?.kind === 'attr' ? `.${steps[0].name}` : ''}`)
        }
      },
    }
  }

  function raw(value: Raw, each: { key: HclValue; value: HclValue } | undefined, where: string): HclValue {
    try {
      if (typeof value === 'string') return evaluate(expression(value), scopeFor(each))
      if (typeof value === 'number' || typeof value === 'boolean' || value === null) return value
      if (Array.isArray(value)) return value.map((v, i) => raw(v, each, `${where}[${i}]`))
      if (typeof value === 'object') {
        const out: Record<string, HclValue> = {}
        for (const [k, v] of Object.entries(value as Record<string, Raw>)) {
          if (k.includes('${')) throw new HclError(`computed object keys are not supported (${k})`)
          out[k] = raw(v, each, `${where}.${k}`)
        }
        return out
      }
      throw new HclError(`unexpected value ${String(value)}`)
    } catch (err) {
      if (err instanceof HclError && !err.message.startsWith(`${where}`)) {
        throw new HclError(`${where}: ${err.message}`)
      }
      throw err
    }
  }

  return {
    dir,
    local,
    variable,
    evaluateRaw: (value, each, where = 'value') => raw(value, each, where),
    rawBody(type, name) {
      const body = mod.resources[type]?.[name]?.[0] as Record<string, unknown> | undefined
      if (!body) throw new HclError(`${type}.${name} is not declared in infra/`)
      return body
    },
    resources(type) {
      return Object.keys(mod.resources[type] ?? {}).map((name) => ({
        type,
        name,
        instances() {
          const v = referenceValue('resource', type, name)
          if (v instanceof LazyObject) return [{ key: null, attrs: v }]
          if (!isPlainObject(v)) throw new HclError(`${type}.${name}: unexpected instances`)
          return Object.entries(v).map(([key, attrs]) => ({ key, attrs: attrs as LazyObject }))
        },
      }))
    },
  }
}
