import { html, type SafeHtml } from './html.ts'

/**
 * A body as the portal shows it (docs/portal.md, "JSON bodies"): JSON indented two spaces a level,
 * every object or array longer than FOLD_LINES lines a `<details open>` that folds it to one line
 * (no script: the browser's own disclosure); anything that is not JSON (a cut-off excerpt, an
 * HTML error page) as the text it is. Values are shown as they were written, token by token
 * (a number keeps every digit, a string its escapes), never re-serialized. Every text goes
 * through `html`, so a body cannot add markup.
 */

/** An object or array of more lines than this can be folded. */
const FOLD_LINES = 8

/** One JSON token as written: a string, a number or literal, or punctuation. */
const TOKEN = /\s*("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null|[{}[\]:,])/y

type Node = { kind: 'scalar'; text: string } | { kind: 'object'; members: Array<[key: string, value: Node]> } | { kind: 'array'; items: Node[] }

/** The tokens of a text that JSON.parse accepted (so the grammar below needs no error handling). */
function tokensOf(text: string): string[] {
  const tokens: string[] = []
  TOKEN.lastIndex = 0
  for (let m = TOKEN.exec(text); m; m = TOKEN.exec(text)) tokens.push(m[1]!)
  return tokens
}

function parse(tokens: string[]): Node {
  let at = 0
  const value = (): Node => {
    const t = tokens[at++]!
    if (t === '{') {
      const members: Array<[string, Node]> = []
      while (tokens[at] !== '}') {
        const key = tokens[at]!
        at += 2 // the key and its colon
        members.push([key, value()])
        if (tokens[at] === ',') at++
      }
      at++
      return { kind: 'object', members }
    }
    if (t === '[') {
      const items: Node[] = []
      while (tokens[at] !== ']') {
        items.push(value())
        if (tokens[at] === ',') at++
      }
      at++
      return { kind: 'array', items }
    }
    return { kind: 'scalar', text: t }
  }
  return value()
}

/** the lines a node takes when indented */
function linesOf(node: Node): number {
  if (node.kind === 'scalar') return 1
  const children = node.kind === 'object' ? node.members.map(([, v]) => v) : node.items
  return children.length === 0 ? 1 : 2 + children.reduce((n, c) => n + linesOf(c), 0)
}

const scalarClass = (text: string) => (text.startsWith('"') ? 'json-string' : 'json-literal')

/** a node as lines: `prefix` ("key": ) before it, `comma` after it */
function render(node: Node, prefix: SafeHtml | '', comma: string): SafeHtml {
  if (node.kind === 'scalar') return html`<div class="json-line">${prefix}<span class="${scalarClass(node.text)}">${node.text}</span>${comma}</div>`
  const [open, close] = node.kind === 'object' ? ['{', '}'] : ['[', ']']
  const children =
    node.kind === 'object'
      ? node.members.map(([k, v], i) => render(v, html`<span class="json-key">${k}</span>: `, i < node.members.length - 1 ? ',' : ''))
      : node.items.map((v, i) => render(v, '', i < node.items.length - 1 ? ',' : ''))
  if (children.length === 0) return html`<div class="json-line">${prefix}${open}${close}${comma}</div>`
  const inner = html`<div class="json-members">${children}</div><div class="json-line">${close}${comma}</div>`
  if (linesOf(node) <= FOLD_LINES) return html`<div class="json-line">${prefix}${open}</div>${inner}`
  const count =
    node.kind === 'object' ? `${children.length} ${children.length === 1 ? 'key' : 'keys'}` : `${children.length} ${children.length === 1 ? 'item' : 'items'}`
  return html`<details class="json-fold" open><summary>${prefix}${open}<span class="json-folded"> ${count} ${close}${comma}</span></summary>${inner}</details>`
}

/** How a body is shown: `label` names it for a screen reader. */
interface BodyViewOptions {
  label: string
  /**
   * also the exact text, folded under "Exact text" (a body whose bytes matter: a signed request,
   * a receiver's answer); `id` is its `<code>`'s, for a Copy button
   */
  exact?: { id?: string }
}

const textBlock = (body: string, label: string, id?: string) =>
  html`<pre class="code" tabindex="0" aria-label="${label}"><code${id ? html` id="${id}"` : ''}>${body}</code></pre>`

/** The body, readable: indented JSON with long parts foldable (and its exact text when asked), or else its text. */
export function jsonView(body: string, o: BodyViewOptions): SafeHtml {
  let isJson = body.trim() !== ''
  try {
    if (isJson) JSON.parse(body)
  } catch {
    isJson = false
  }
  if (!isJson) return textBlock(body, o.label, o.exact?.id)
  // a figure: a listing that stands on its own (and, like a <pre>, one no time scan reads: times.test.ts)
  const readable = html`<figure class="json" aria-label="${o.label}">${render(parse(tokensOf(body)), '', '')}</figure>`
  if (!o.exact) return readable
  return html`${readable}<details class="exact"><summary>Exact text</summary>${textBlock(body, `${o.label}, exact text`, o.exact.id)}</details>`
}
