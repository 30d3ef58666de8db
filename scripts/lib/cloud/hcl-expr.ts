/**
 * A parser and evaluator for the part of Terraform's expression language that infra/ uses in
 * what `npm run start:cloud` reads (service environments, Pub/Sub, secrets, queues): literals,
 * string templates, references (var., local., each., data., resources), index and attribute
 * access, tuples, objects, for expressions and a handful of functions. @cdktf/hcl2json hands
 * every expression over as a `${…}` template string; this turns such a string into a value.
 *
 * Anything outside that subset (operators, conditionals, splats, template directives, unknown
 * functions, a missing key) throws an HclError naming it: start:cloud must never quietly run a
 * service with an environment that differs from what Terraform would give it.
 */

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

export type Step = { kind: 'attr'; name: string } | { kind: 'index'; key: Expr }

export type Expr =
  | { type: 'literal'; value: HclValue }
  | { type: 'template'; parts: Array<string | Expr> }
  | { type: 'tuple'; items: Expr[] }
  | { type: 'object'; entries: Array<{ key: Expr | string; value: Expr }> }
  | { type: 'ref'; root: string; steps: Step[] }
  | { type: 'postfix'; target: Expr; steps: Step[] }
  | { type: 'call'; name: string; args: Expr[]; expandLast: boolean }
  | {
      type: 'for'
      kind: 'tuple' | 'object'
      keyVar: string | null
      valueVar: string
      collection: Expr
      keyExpr: Expr | null
      valueExpr: Expr
      condition: Expr | null
    }

/** What a reference root resolves to; the evaluator owns for-expression variables. */
export interface Scope {
  /** resolves `root` plus the steps it consumes (e.g. `var.x` consumes `.x`); returns the value and how many steps it used */
  reference(root: string, steps: Step[], evaluate: (e: Expr) => HclValue): { value: HclValue; used: number }
}

const IDENT_START = /[A-Za-z_]/
const IDENT_PART = /[A-Za-z0-9_-]/

/** Recursive descent over one source string: templates and expressions nest into each other. */
class Parser {
  private pos = 0
  private readonly src: string
  constructor(src: string) {
    this.src = src
  }

  private fail(what: string): never {
    const at = this.src.slice(Math.max(0, this.pos - 20), this.pos + 30).replace(/\s+/g, ' ')
    throw new HclError(`${what} (at "…${at}…" in ${JSON.stringify(this.src.length > 200 ? `${this.src.slice(0, 200)}…` : this.src)})`)
  }

  private peek(n = 0): string {
    return this.src[this.pos + n] ?? ''
  }

  private skipSpace(): void {
    for (;;) {
      const c = this.peek()
      if (c === ' ' || c === '\t' || c === '\n' || c === '\r') this.pos++
      else if (c === '#' || (c === '/' && this.peek(1) === '/')) {
        while (this.pos < this.src.length && this.peek() !== '\n') this.pos++
      } else if (c === '/' && this.peek(1) === '*') {
        const end = this.src.indexOf('*/', this.pos + 2)
        if (end < 0) this.fail('unterminated comment')
        this.pos = end + 2
      } else return
    }
  }

  private eat(s: string): boolean {
    this.skipSpace()
    if (this.src.startsWith(s, this.pos)) {
      this.pos += s.length
      return true
    }
    return false
  }

  private expect(s: string): void {
    if (!this.eat(s)) this.fail(`expected "${s}"`)
  }

  /** A whole attribute value as hcl2json gives it: a template, possibly a single interpolation. */
  parseTopTemplate(): Expr {
    const t = this.parseTemplate(null)
    if (this.pos !== this.src.length) this.fail('unexpected text after the template')
    return t
  }

  /** Template text until `close` (a quote) or the end; `${…}` interpolates, `$${` and `%%{` escape. */
  private parseTemplate(close: '"' | null): Expr {
    const parts: Array<string | Expr> = []
    let text = ''
    for (;;) {
      if (this.pos >= this.src.length) {
        if (close) this.fail('unterminated string')
        break
      }
      const c = this.peek()
      if (close && c === close) {
        this.pos++
        break
      }
      if (c === '$' && this.peek(1) === '$' && this.peek(2) === '{') {
        text += '${'
        this.pos += 3
      } else if (c === '%' && this.peek(1) === '%' && this.peek(2) === '{') {
        text += '%{'
        this.pos += 3
      } else if (c === '%' && this.peek(1) === '{') {
        this.fail('template directives (%{ … }) are not supported')
      } else if (c === '$' && this.peek(1) === '{') {
        this.pos += 2
        if (this.peek() === '~') this.fail('strip markers (${~) are not supported')
        if (text) parts.push(text)
        text = ''
        parts.push(this.parseExpression())
        this.skipSpace()
        if (this.peek() === '~') this.fail('strip markers (~}) are not supported')
        this.expect('}')
      } else if (close && c === '\\') {
        text += this.parseEscape()
      } else {
        text += c
        this.pos++
      }
    }
    if (text || parts.length === 0) parts.push(text)
    // a template that is exactly one interpolation yields that value unconverted (HCL rule)
    if (parts.length === 1 && typeof parts[0] !== 'string') return parts[0]!
    if (parts.length === 1 && typeof parts[0] === 'string') return { type: 'literal', value: parts[0] }
    return { type: 'template', parts }
  }

  private parseEscape(): string {
    const n = this.peek(1)
    this.pos += 2
    const simple: Record<string, string> = { n: '\n', r: '\r', t: '\t', '"': '"', '\\': '\\' }
    if (n in simple) return simple[n]!
    if (n === 'u' || n === 'U') {
      const len = n === 'u' ? 4 : 8
      const hex = this.src.slice(this.pos, this.pos + len)
      if (!/^[0-9A-Fa-f]+$/.test(hex) || hex.length !== len) this.fail('bad unicode escape')
      this.pos += len
      return String.fromCodePoint(parseInt(hex, 16))
    }
    this.fail(`unknown escape \\${n}`)
  }

  parseExpression(): Expr {
    const e = this.parsePostfix()
    this.skipSpace()
    const rest = this.src.slice(this.pos)
    const op = /^(==|!=|<=|>=|&&|\|\||[?<>+\-*/%!])/.exec(rest)
    if (op) this.fail(`operator "${op[1]}" is not supported`)
    return e
  }

  private ident(): string {
    this.skipSpace()
    if (!IDENT_START.test(this.peek())) this.fail('expected a name')
    const start = this.pos
    while (IDENT_PART.test(this.peek())) this.pos++
    return this.src.slice(start, this.pos)
  }

  private parseSteps(): Step[] {
    const steps: Step[] = []
    for (;;) {
      this.skipSpace()
      if (this.peek() === '.' && this.peek(1) === '.') return steps // `...` expansion, not a step
      if (this.peek() === '.' && this.peek(1) === '*') this.fail('splat expressions (.*) are not supported')
      if (this.peek() === '[' && /^\[\s*\*\s*\]/.test(this.src.slice(this.pos))) this.fail('splat expressions ([*]) are not supported')
      if (this.peek() === '.' && /[0-9]/.test(this.peek(1))) {
        this.pos++
        const start = this.pos
        while (/[0-9]/.test(this.peek())) this.pos++
        steps.push({ kind: 'index', key: { type: 'literal', value: Number(this.src.slice(start, this.pos)) } })
      } else if (this.peek() === '.') {
        this.pos++
        steps.push({ kind: 'attr', name: this.ident() })
      } else if (this.peek() === '[') {
        this.pos++
        const key = this.parseExpression()
        this.expect(']')
        steps.push({ kind: 'index', key })
      } else return steps
    }
  }

  private parsePostfix(): Expr {
    this.skipSpace()
    const c = this.peek()
    let base: Expr
    if (c === '"') {
      this.pos++
      base = this.parseTemplate('"')
    } else if (/[0-9]/.test(c)) {
      const m = /^[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(this.src.slice(this.pos))!
      this.pos += m[0].length
      base = { type: 'literal', value: Number(m[0]) }
    } else if (c === '<' && this.peek(1) === '<') {
      this.fail('heredoc strings are not supported')
    } else if (c === '[') {
      this.pos++
      base = this.parseTupleOrFor()
    } else if (c === '{') {
      this.pos++
      base = this.parseObjectOrFor()
    } else if (c === '(') {
      this.pos++
      base = this.parseExpression()
      this.expect(')')
    } else if (IDENT_START.test(c)) {
      const name = this.ident()
      this.skipSpace()
      if (name === 'true' || name === 'false') base = { type: 'literal', value: name === 'true' }
      else if (name === 'null') base = { type: 'literal', value: null }
      else if (this.peek() === '(') {
        this.pos++
        base = this.parseCall(name)
      } else {
        return { type: 'ref', root: name, steps: this.parseSteps() }
      }
    } else {
      this.fail(c ? `unexpected "${c}"` : 'unexpected end of expression')
    }
    const steps = this.parseSteps()
    return steps.length ? { type: 'postfix', target: base, steps } : base
  }

  private parseCall(name: string): Expr {
    const args: Expr[] = []
    let expandLast = false
    if (!this.eat(')')) {
      for (;;) {
        args.push(this.parseExpression())
        if (this.eat('...')) {
          expandLast = true
          this.expect(')')
          break
        }
        if (this.eat(')')) break
        this.expect(',')
        if (this.eat(')')) break
      }
    }
    return { type: 'call', name, args, expandLast }
  }

  private atKeyword(word: string): boolean {
    this.skipSpace()
    const re = new RegExp(`^${word}(?![A-Za-z0-9_-])`)
    return re.test(this.src.slice(this.pos))
  }

  private parseForHead(): { keyVar: string | null; valueVar: string; collection: Expr } {
    this.ident() // `for`
    const first = this.ident()
    let keyVar: string | null = null
    let valueVar = first
    if (this.eat(',')) {
      keyVar = first
      valueVar = this.ident()
    }
    if (this.ident() !== 'in') this.fail('expected "in"')
    const collection = this.parseExpression()
    this.expect(':')
    return { keyVar, valueVar, collection }
  }

  private parseCondition(): Expr | null {
    if (!this.atKeyword('if')) return null
    this.ident()
    return this.parseExpression()
  }

  private parseTupleOrFor(): Expr {
    if (this.atKeyword('for')) {
      const head = this.parseForHead()
      const valueExpr = this.parseExpression()
      const condition = this.parseCondition()
      this.expect(']')
      return { type: 'for', kind: 'tuple', ...head, keyExpr: null, valueExpr, condition }
    }
    const items: Expr[] = []
    if (this.eat(']')) return { type: 'tuple', items }
    for (;;) {
      items.push(this.parseExpression())
      if (this.eat(']')) break
      this.expect(',')
      if (this.eat(']')) break
    }
    return { type: 'tuple', items }
  }

  private parseObjectOrFor(): Expr {
    if (this.atKeyword('for')) {
      const head = this.parseForHead()
      const keyExpr = this.parseExpression()
      this.expect('=>')
      const valueExpr = this.parseExpression()
      if (this.eat('...')) this.fail('grouping for expressions (...) are not supported')
      const condition = this.parseCondition()
      this.expect('}')
      return { type: 'for', kind: 'object', ...head, keyExpr, valueExpr, condition }
    }
    const entries: Array<{ key: Expr | string; value: Expr }> = []
    for (;;) {
      if (this.eat('}')) break
      this.skipSpace()
      let key: Expr | string
      if (IDENT_START.test(this.peek())) {
        const save = this.pos
        const name = this.ident()
        this.skipSpace()
        // a bare name followed by = or : is a literal key; anything else is an expression key
        if (this.peek() === '=' || this.peek() === ':') key = name
        else {
          this.pos = save
          key = this.parseExpression()
        }
      } else key = this.parseExpression()
      this.skipSpace()
      if (!this.eat('=') && !this.eat(':')) this.fail('expected "=" or ":" in an object')
      entries.push({ key, value: this.parseExpression() })
      this.eat(',')
    }
    return { type: 'object', entries }
  }
}

/** Parses one hcl2json string value (a template; `${x}` alone is the expression x). */
export function parseTemplate(source: string): Expr {
  return new Parser(source).parseTopTemplate()
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
function applySteps(value: HclValue, steps: Step[], evaluate: (e: Expr) => HclValue, what: string): HclValue {
  let v = value
  let path = what
  for (const step of steps) {
    const key = step.kind === 'attr' ? step.name : evaluate(step.key)
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

function toTemplateString(v: HclValue, where: string): string {
  if (typeof v === 'string') return v
  if (typeof v === 'number' || typeof v === 'boolean') return String(v)
  throw new HclError(`${where}: cannot interpolate ${describe(v)} into a string`)
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
}

/** Evaluates a parsed expression; for-expression variables shadow the scope's roots. */
export function evaluate(expr: Expr, scope: Scope, locals: Map<string, HclValue> = new Map()): HclValue {
  const ev = (e: Expr) => evaluate(e, scope, locals)
  switch (expr.type) {
    case 'literal':
      return expr.value
    case 'template':
      return expr.parts.map((p) => (typeof p === 'string' ? p : toTemplateString(ev(p), 'template'))).join('')
    case 'tuple':
      return expr.items.map(ev)
    case 'object': {
      const out: Record<string, HclValue> = {}
      for (const { key, value } of expr.entries) {
        const k = typeof key === 'string' ? key : ev(key)
        if (typeof k !== 'string') throw new HclError(`object key is ${describe(k)}, not a string`)
        out[k] = ev(value)
      }
      return out
    }
    case 'ref': {
      if (locals.has(expr.root)) return applySteps(locals.get(expr.root)!, expr.steps, ev, expr.root)
      const { value, used } = scope.reference(expr.root, expr.steps, ev)
      return applySteps(value, expr.steps.slice(used), ev, expr.root)
    }
    case 'postfix':
      return applySteps(ev(expr.target), expr.steps, ev, 'expression')
    case 'call': {
      const fn = FUNCTIONS[expr.name]
      if (!fn) throw new HclError(`function ${expr.name}() is not supported`)
      const args = expr.args.map(ev)
      if (expr.expandLast) {
        const last = args.pop()!
        if (!Array.isArray(last)) throw new HclError(`${expr.name}(…...): the expanded argument is not a list`)
        args.push(...last)
      }
      return fn(args)
    }
    case 'for': {
      const pairs = iterate(ev(expr.collection), 'for expression')
      const tuple: HclValue[] = []
      const object: Record<string, HclValue> = {}
      for (const [k, v] of pairs) {
        const inner = new Map(locals)
        if (expr.keyVar) inner.set(expr.keyVar, k)
        inner.set(expr.valueVar, v)
        const evIn = (e: Expr) => evaluate(e, scope, inner)
        if (expr.condition) {
          const keep = evIn(expr.condition)
          if (typeof keep !== 'boolean') throw new HclError('for expression: the if condition is not a boolean')
          if (!keep) continue
        }
        if (expr.kind === 'tuple') tuple.push(evIn(expr.valueExpr))
        else {
          const key = evIn(expr.keyExpr!)
          if (typeof key !== 'string') throw new HclError('for expression: the key is not a string')
          if (Object.hasOwn(object, key)) throw new HclError(`for expression: duplicate key ${JSON.stringify(key)}`)
          object[key] = evIn(expr.valueExpr)
        }
      }
      return expr.kind === 'tuple' ? tuple : object
    }
  }
}
