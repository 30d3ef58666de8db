import { html, SafeHtml } from './html.ts'

/**
 * A refused form's errors summarised at the top of its page (issue 29, D11; the GOV.UK "error
 * summary"): "There is a problem", then each error as a link to its field, and focus on the
 * summary when the page loads (`autofocus` on a `tabindex="-1"` element: no script), so the
 * tenant neither misses an error below the fold nor hunts for it.
 *
 * Found in the page's body, not declared by each form: an error is a block with class
 * `field-error` (kit/ui.ts textField, formError, and the screens' own), its field the control
 * whose `aria-describedby` names it. So every form gets the summary, as it is today and as forms
 * are added. An error with no field (a form-wide refusal) links to itself.
 */

const ERROR_BLOCK = /<(p|ul|div)\b([^>]*\bclass="field-error"[^>]*)>([\s\S]*?)<\/\1>/g
const CONTROL = /<(?:input|textarea|select)\b[^>]*>/g

let counter = 0

interface Problem {
  href: string
  /** the error's text, escaped already (the page's own), tags dropped */
  text: string
}

/** an error's words: its items joined, tags dropped (the text was escaped when the page was drawn) */
const wordsOf = (inner: string) =>
  inner
    .replace(/<\/li>\s*<li[^>]*>/g, '; ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()

/**
 * The body with an id on every error that lacked one, and the problems it shows in page order,
 * each with the fragment of its field (or of itself).
 */
export function problemsOf(body: SafeHtml): { body: SafeHtml; problems: Problem[] } {
  if (!body.value.includes('field-error')) return { body, problems: [] }
  const controls = [...body.value.matchAll(CONTROL)].map((m) => ({
    id: /\bid="([^"]+)"/.exec(m[0])?.[1] ?? null,
    describedBy: (/\baria-describedby="([^"]*)"/.exec(m[0])?.[1] ?? '').split(/\s+/).filter(Boolean),
  }))
  const problems: Problem[] = []
  const withIds = body.value.replace(ERROR_BLOCK, (whole, tag: string, attributes: string, inner: string) => {
    const text = wordsOf(inner)
    if (text === '') return whole
    const own = /\bid="([^"]+)"/.exec(attributes)?.[1]
    counter = (counter + 1) % 1_000_000
    const id = own ?? `problem-${counter}`
    const field = controls.find((c) => c.id !== null && c.describedBy.includes(id))
    problems.push({ href: `#${field?.id ?? id}`, text })
    return own ? whole : `<${tag} id="${id}"${attributes}>${inner}</${tag}>`
  })
  return { body: new SafeHtml(withIds), problems }
}

/** The summary at the top of the page: the page's own error sentence, then a link per problem; focused on load. */
export function errorSummary(error: string | null | undefined, problems: readonly Problem[]): SafeHtml | '' {
  if (!error && problems.length === 0) return ''
  return html`<div class="error-summary" id="error-summary" tabindex="-1" autofocus aria-labelledby="error-summary-h">
<h2 id="error-summary-h">There is a problem</h2>
<div role="alert">${error ? html`<p>${error}</p>` : ''}${
    problems.length ? html`<ul>${problems.map((p) => html`<li><a href="${p.href}">${new SafeHtml(p.text)}</a></li>`)}</ul>` : ''
  }</div>
</div>`
}
