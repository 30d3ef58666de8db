/**
 * An evaluator for the part of Terraform's expression language that infra/ uses in what
 * `npm run start:cloud` reads (service environments, Pub/Sub, secrets, queues): literals, string
 * templates, references (var., local., each., data., resources), index and attribute access,
 * tuples, objects, for expressions and a handful of functions.
 *
 * The parsing is Terraform's own: @cdktf/hcl2json hands every expression over as a `${…}` template
 * string, and its getExpressionAst runs that string through hclsyntax (HashiCorp's HCL parser, in
 * wasm) and returns the syntax tree. This module only evaluates that tree. Every node it does not
 * handle (operators, conditionals, splats, template directives, unknown functions, a missing key)
 * throws an HclError naming it: start:cloud must never quietly run a service with an environment
 * that differs from what Terraform would give it.
 */
import { getExpressionAst, type TFExpressionSyntaxTree } from '@cdktf/hcl2json'

export class HclError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'HclError'
  }
}

/** An object whose attributes are computed on first access (a resource instance, a data source). */
export class LazyObject {
  readonly label: string
  private readonly resolve: (attribute: string) => HclValue
  private readonly cache = new Map<string, HclValue>()
  constructor(label: string, resolve: (attribute: string) => HclValue) {
    this.label = label
    this.resolve = resolve
  }

  get(attribute: string): HclValue {
    if (!this.cache.has(attribute)) this.cache.set(attribute, this.resolve(attribute))
    return this.cache.get(attribute)!
  }
}

export type HclValue = string | number | boolean | null | HclValue[] | { [key: string]: HclValue } | LazyObject

/**
 * A node of hclsyntax's tree as getExpressionAst returns it: children in source order, `meta.value`
 * the node's source text. Nodes the bridge has no name for (parentheses, object keys) come with
 * type "" and no meta; parseTemplates gives a bare object key its name as meta.value.
 */
export type Expr = TFExpressionSyntaxTree.ExpressionType

/** One step after a reference's root; index keys written literally (`x["k"]`, `x[0]`). */
export type Step = { kind: 'attr'; name: string } | { kind: 'index'; key: string | number }

/** What a reference root resolves to; the evaluator owns for-expression variables. */
export interface Scope {
  /** resolves `root` plus the steps it consumes (e.g. `var.x` consumes `.x`); returns the value and how many steps it used */
  reference(root: string, steps: Step[]): { value: HclValue; used: number }
}

const stringLiteral = (value: string): Expr => ({ type: 'literalValue', children: [], meta: { value, type: 'string' } }) as unknown as Expr

/** Object keys written as bare names: hclsyntax reads them as strings, the bridge only gives their range. */
function nameBareKeys(node: Expr, source: Buffer): void {
  if (node.type === 'object') {
    node.children.forEach((key, i) => {
      if (i % 2 === 0 && (key.type as string) === '' && key.children.length === 0)
        (key as { meta?: { value: string } }).meta = { value: source.subarray(key.range.start.byte, key.range.end.byte).toString('utf8') }
    })
  }
  for (const child of node.children) nameBareKeys(child, source)
}

/** The tree of one heredoc as a value: without the wrapper's last newline, `${x}` alone unwrapped. */
function unwrapHeredoc(tree: Expr, source: string): Expr {
  if (tree.type !== 'template') throw new HclError(`${JSON.stringify(source)} did not parse as a template`)
  // the newline before the heredoc's closing marker is the wrapper's, not the value's
  const parts = tree.children
  const last = parts.at(-1)
  if (last?.type === 'literalValue' && last.meta.value.endsWith('\n')) {
    last.meta.value = last.meta.value.slice(0, -1)
    if (last.meta.value === '') parts.pop()
  }
  if (parts.length === 0) return stringLiteral('')
  // a template that is exactly one interpolation yields that value unconverted (HCL rule)
  if (parts.length === 1 && parts[0]!.type !== 'literalValue') return parts[0]!
  return tree
}

/**
 * Parses hcl2json string values (each a template; `${x}` alone is the expression x, unconverted),
 * mapping each to its tree or to the HclError that Terraform's parser gave it. hcl2json has already
 * decoded the literal text between interpolations, so each string goes to the parser as a heredoc,
 * the one template form without backslash escapes; a string without `${` or `%{` has nothing to
 * parse. All of them go in one call (a tuple of heredocs): each call into the wasm parser costs
 * milliseconds. Async: the parser runs in wasm.
 */
export async function parseTemplates(sources: Iterable<string>): Promise<Map<string, Expr | HclError>> {
  const out = new Map<string, Expr | HclError>()
  const pending: string[] = []
  for (const s of new Set(sources)) {
    if (s.includes('${') || s.includes('%{')) pending.push(s)
    else out.set(s, stringLiteral(s))
  }
  if (pending.length === 0) return out
  let marker = 'LSV_END'
  while (pending.some((s) => s.includes(marker))) marker += '_'
  const wrapped = `[\n${pending.map((s) => `<<${marker}\n${s}\n${marker}\n`).join(',\n')}]\n`
  let tree: Expr | null
  try {
    tree = await getExpressionAst('infra.tf', wrapped)
  } catch (err) {
    if (pending.length === 1) {
      // the bridge repeats the whole input before the diagnostic; its first line is what matters
      const diagnostic = (err as Error).message.replace(`getExpressionAst errors on input string '${wrapped}': `, '').split('\n')[0]!.trim()
      out.set(pending[0]!, new HclError(`Terraform's parser refuses ${JSON.stringify(pending[0])}: ${diagnostic}`))
      return out
    }
    // one of them does not parse: alone, each gets its own verdict
    for (const s of pending) out.set(s, (await parseTemplates([s])).get(s)!)
    return out
  }
  if (tree?.type !== 'tuple' || tree.children.length !== pending.length) throw new HclError('the parsed tuple of templates has the wrong shape')
  nameBareKeys(tree, Buffer.from(wrapped, 'utf8'))
  for (const [i, s] of pending.entries()) out.set(s, unwrapHeredoc(tree.children[i]!, s))
  return out
}

/** Parses one hcl2json string value; throws the parser's refusal. */
export async function parseTemplate(source: string): Promise<Expr> {
  const parsed = (await parseTemplates([source])).get(source)!
  if (parsed instanceof HclError) throw parsed
  return parsed
}

export function isPlainObject(v: HclValue): v is { [key: string]: HclValue } {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof LazyObject)
}

function describe(v: HclValue): string {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'a list'
  if (v instanceof LazyObject) return v.label
  return typeof v === 'object' ? 'an object' : `${typeof v} ${JSON.stringify(v)}`
}

/** Applies attribute and index steps to a value; a missing key throws. */
function applySteps(value: HclValue, steps: Step[], what: string): HclValue {
  let v = value
  let path = what
  for (const step of steps) {
    const key = step.kind === 'attr' ? step.name : step.key
    path += step.kind === 'attr' ? `.${step.name}` : `[${JSON.stringify(key)}]`
    if (v instanceof LazyObject) {
      if (typeof key !== 'string') throw new HclError(`${path}: ${v.label} has no element ${JSON.stringify(key)}`)
      v = v.get(key)
    } else if (Array.isArray(v)) {
      if (typeof key !== 'number' || !Number.isInteger(key) || key < 0 || key >= v.length) throw new HclError(`${path}: no such element`)
      v = v[key]!
    } else if (isPlainObject(v)) {
      if (typeof key !== 'string' || !Object.hasOwn(v, key)) throw new HclError(`${path}: no such key`)
      v = v[key]!
    } else {
      throw new HclError(`${path}: cannot index ${describe(v)}`)
    }
  }
  return v
}

/** A traversal's parts as steps: the bridge quotes string keys (`"k"`) and prints numbers bare. */
function toSteps(parts: TFExpressionSyntaxTree.TerraformTraversalPart[]): Step[] {
  return parts.map((p) => {
    if (p.type === 'nameTraversal') return { kind: 'attr', name: p.segment }
    if (p.segment.startsWith('"')) return { kind: 'index', key: p.segment.slice(1, -1) }
    // a key that is neither a string nor a number comes through empty
    if (p.segment === '' || Number.isNaN(Number(p.segment))) throw new HclError(`index [${p.segment}] is not a string or a number`)
    return { kind: 'index', key: Number(p.segment) }
  })
}

function toTemplateString(v: HclValue, where: string): string {
  if (typeof v === 'string') return v
  if (typeof v === 'number' || typeof v === 'boolean') return String(v)
  throw new HclError(`${where}: cannot interpolate ${describe(v)} into a string`)
}

/** A template literal's text from its source: quoted strings decode backslash escapes, heredocs do not. */
function decodeLiteral(text: string, quoted: boolean): string {
  const simple: Record<string, string> = { n: '\n', r: '\r', t: '\t', '"': '"', '\\': '\\' }
  const escapes = quoted ? /\$\$\{|%%\{|\\(?:u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|.)/g : /\$\$\{|%%\{/g
  return text.replace(escapes, (m) => {
    if (m === '$${' || m === '%%{') return m.slice(1)
    if (m[1] === 'u' || m[1] === 'U') return String.fromCodePoint(parseInt(m.slice(2), 16))
    const c = simple[m[1]!]
    if (c === undefined) throw new HclError(`unknown escape ${m}`)
    return c
  })
}

/** Plain JSON of a value (jsonencode); lazy objects cannot be encoded. */
function toJson(v: HclValue): unknown {
  if (v instanceof LazyObject) throw new HclError(`jsonencode: cannot encode ${v.label}`)
  if (Array.isArray(v)) return v.map(toJson)
  if (isPlainObject(v))
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, toJson(v[k]!)]),
    )
  return v
}

/** The pairs a for expression or for_each iterates: lists by index, objects by key (sorted, as Terraform). */
export function iterate(collection: HclValue, where: string): Array<[string | number, HclValue]> {
  if (Array.isArray(collection)) return collection.map((v, i) => [i, v])
  if (isPlainObject(collection))
    return Object.keys(collection)
      .sort()
      .map((k) => [k, collection[k]!])
  throw new HclError(`${where}: cannot iterate over ${describe(collection)}`)
}

const FUNCTIONS: Record<string, (args: HclValue[]) => HclValue> = {
  merge(args) {
    const out: Record<string, HclValue> = {}
    for (const a of args) {
      if (a === null) continue
      if (!isPlainObject(a)) throw new HclError(`merge: argument is ${describe(a)}, not an object`)
      Object.assign(out, a)
    }
    return out
  },
  toset(args) {
    const [list] = args
    if (!Array.isArray(list)) throw new HclError('toset: argument is not a list')
    const seen = new Map<string, HclValue>()
    for (const item of list) seen.set(JSON.stringify(item), item)
    // Terraform orders a set of strings lexically
    return [...seen.values()].sort((a, b) => (String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0))
  },
  tolist(args) {
    if (!Array.isArray(args[0])) throw new HclError('tolist: argument is not a list')
    return args[0]
  },
  tomap(args) {
    if (!isPlainObject(args[0]!)) throw new HclError('tomap: argument is not an object')
    return args[0]!
  },
  concat(args) {
    return args.flatMap((a) => {
      if (!Array.isArray(a)) throw new HclError('concat: argument is not a list')
      return a
    })
  },
  keys(args) {
    const [o] = args
    if (!isPlainObject(o!)) throw new HclError('keys: argument is not an object')
    return Object.keys(o as object).sort()
  },
  values(args) {
    const [o] = args
    if (!isPlainObject(o!)) throw new HclError('values: argument is not an object')
    return Object.keys(o as object)
      .sort()
      .map((k) => (o as Record<string, HclValue>)[k]!)
  },
  lookup(args) {
    const [o, k, fallback] = args
    if (!isPlainObject(o!) || typeof k !== 'string') throw new HclError('lookup: needs an object and a string key')
    if (Object.hasOwn(o as object, k)) return (o as Record<string, HclValue>)[k]!
    if (args.length < 3) throw new HclError(`lookup: no key ${JSON.stringify(k)} and no default`)
    return fallback!
  },
  jsonencode(args) {
    return JSON.stringify(toJson(args[0]!))
  },
  length(args) {
    const [v] = args
    if (Array.isArray(v)) return v.length
    if (isPlainObject(v!)) return Object.keys(v as object).length
    if (typeof v === 'string') return [...v].length
    throw new HclError('length: argument has no length')
  },
  /** range(limit) or range(start, limit): whole numbers, step 1 (what infra/ uses) */
  range(args) {
    const [a, b] = args
    const [start, limit] = b === undefined ? [0, a] : [a, b]
    if (typeof start !== 'number' || typeof limit !== 'number' || !Number.isInteger(start) || !Number.isInteger(limit))
      throw new HclError('range: only whole-number start and limit are supported')
    return Array.from({ length: Math.max(0, limit - start) }, (_, i) => start + i)
  },
  /** format() with the verbs infra/ uses: %s, %d, %0Nd, %% */
  format(args) {
    const [spec, ...values] = args
    if (typeof spec !== 'string') throw new HclError('format: the spec is not a string')
    let next = 0
    return spec.replace(/%(%|s|0?\d*d)/g, (_, verb: string) => {
      if (verb === '%') return '%'
      const v = values[next++]
      if (v === undefined) throw new HclError(`format: too few arguments for ${spec}`)
      if (verb === 's') return String(v)
      if (typeof v !== 'number') throw new HclError(`format: %d of ${describe(v)}`)
      const width = Number(verb.slice(0, -1) || '0')
      return String(Math.trunc(v)).padStart(width, verb.startsWith('0') ? '0' : ' ')
    })
  },
}

/** hclsyntax's operation names (as the bridge reports them), back to what infra/ would have written. */
const OPERATORS: Record<string, string> = {
  logicalOr: '||',
  logicalAnd: '&&',
  logicalNot: '!',
  equal: '==',
  notEqual: '!=',
  greaterThan: '>',
  greaterThanOrEqual: '>=',
  lessThan: '<',
  lessThanOrEqual: '<=',
  add: '+',
  subtract: '-',
  multiply: '*',
  divide: '/',
  modulo: '%',
  negate: '-',
}

function unsupported(what: string, node: { meta?: { value?: string } }): HclError {
  const src = node.meta?.value ?? ''
  return new HclError(`unsupported: ${what} in \`${src.length > 160 ? `${src.slice(0, 160)}…` : src}\``)
}

/** Evaluates a parsed expression; for-expression variables shadow the scope's roots. */
export function evaluate(expr: Expr, scope: Scope, locals: Map<string, HclValue> = new Map()): HclValue {
  const ev = (e: Expr) => evaluate(e, scope, locals)
  switch (expr.type) {
    case 'literalValue': {
      const { type, value } = expr.meta
      if (type === 'string') return value
      if (type === 'number') return Number(value)
      if (type === 'bool') return value === 'true'
      if (type === 'dynamic' && value === 'null') return null
      throw unsupported(`a literal of type ${type}`, expr)
    }
    case 'template': {
      const src = expr.meta.value
      // both change the literal text, which the tree only has as written
      if (src.startsWith('<<-')) throw unsupported('indented heredocs (<<-)', expr)
      if (/\$\{~|%\{~|~\}/.test(src)) throw unsupported('strip markers (~)', expr)
      const quoted = src.startsWith('"')
      return expr.children
        .map((p) => (p.type === 'literalValue' && p.meta.type === 'string' ? decodeLiteral(p.meta.value, quoted) : toTemplateString(ev(p), 'template')))
        .join('')
    }
    case 'templateWrap':
      return ev(expr.children[0]!)
    case 'tuple':
      return expr.children.map(ev)
    case 'object': {
      // children alternate key, value; a bare-name key is that name, any other key an expression
      const out: Record<string, HclValue> = {}
      for (let i = 0; i < expr.children.length; i += 2) {
        const key = expr.children[i]!
        const k = (key.type as string) === '' && key.children.length === 0 ? key.meta.value : ev(key)
        if (typeof k !== 'string') throw new HclError(`object key is ${describe(k)}, not a string`)
        out[k] = ev(expr.children[i + 1]!)
      }
      return out
    }
    case 'scopeTraversal': {
      const [root, ...rest] = expr.meta.traversal
      const steps = toSteps(rest)
      if (locals.has(root!.segment)) return applySteps(locals.get(root!.segment)!, steps, root!.segment)
      const { value, used } = scope.reference(root!.segment, steps)
      return applySteps(value, steps.slice(used), root!.segment)
    }
    case 'relativeTraversal':
      return applySteps(ev(expr.children[0]!), toSteps(expr.meta.traversal), expr.meta.sourceExpression)
    case 'index': {
      const key = ev(expr.children[1]!)
      if (typeof key !== 'string' && typeof key !== 'number') throw new HclError(`${expr.meta.value}: the key is ${describe(key)}`)
      return applySteps(ev(expr.children[0]!), [{ kind: 'index', key }], expr.meta.collectionExpression)
    }
    case 'function': {
      const { name, expandedFinalArgument } = expr.meta
      if (!Object.hasOwn(FUNCTIONS, name)) throw new HclError(`function ${name}() is not supported`)
      const args = expr.children.map(ev)
      if (expandedFinalArgument) {
        const last = args.pop()!
        if (!Array.isArray(last)) throw new HclError(`${name}(…...): the expanded argument is not a list`)
        args.push(...last)
      }
      return FUNCTIONS[name]!(args)
    }
    case 'for':
      return evaluateFor(expr, scope, locals)
    case 'conditional':
      if (expr.meta.value.startsWith('%{')) throw unsupported('template directives (%{ if })', expr)
      throw unsupported('conditional expressions (… ? … : …)', expr)
    case 'binaryOp':
    case 'unaryOp':
      throw unsupported(`operator "${OPERATORS[expr.meta.operator] ?? expr.meta.operator}"`, expr)
    case 'splat':
      throw unsupported('splat expressions ([*], .*)', expr)
    default: {
      const node = expr as { type: string; children: Expr[]; meta?: { value?: string } }
      // the bridge names no parentheses node: type "" around the one expression inside
      if (node.type === '' && node.children.length === 1) return ev(node.children[0]!)
      if (node.type === 'templateJoin') throw unsupported('template directives (%{ for })', node)
      throw unsupported(`expressions of type "${node.type}"`, node)
    }
  }
}

function evaluateFor(expr: TFExpressionSyntaxTree.ForExpression, scope: Scope, locals: Map<string, HclValue>): HclValue {
  const m = expr.meta
  if (m.groupedValue) throw unsupported('grouping for expressions (...)', expr)
  // children: the collection, the key (object form only), the value, the condition (if any)
  const isObject = m.openRangeValue === '{'
  const [collection, ...rest] = expr.children
  const keyExpr = isObject ? rest.shift() : undefined
  const [valueExpr, condition] = rest
  if (!collection || !valueExpr || rest.length !== ('conditionalExpression' in m ? 2 : 1)) throw unsupported('a for expression of unexpected shape', expr)
  const tuple: HclValue[] = []
  const object: Record<string, HclValue> = {}
  for (const [k, v] of iterate(evaluate(collection, scope, locals), 'for expression')) {
    const inner = new Map(locals)
    if (m.keyVar) inner.set(m.keyVar, k)
    inner.set(m.valVar, v)
    const evIn = (e: Expr) => evaluate(e, scope, inner)
    if (condition) {
      const keep = evIn(condition)
      if (typeof keep !== 'boolean') throw new HclError('for expression: the if condition is not a boolean')
      if (!keep) continue
    }
    if (!keyExpr) tuple.push(evIn(valueExpr))
    else {
      const key = evIn(keyExpr)
      if (typeof key !== 'string') throw new HclError('for expression: the key is not a string')
      if (Object.hasOwn(object, key)) throw new HclError(`for expression: duplicate key ${JSON.stringify(key)}`)
      object[key] = evIn(valueExpr)
    }
  }
  return keyExpr ? object : tuple
}
