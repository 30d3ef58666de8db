import { html, type SafeHtml } from './html.ts'
import { uid } from './ui.ts'

/**
 * A long id in a table cell (docs/portal.md, "Ids"): one line, cut with an ellipsis by CSS
 * (`code.id`), the whole id in the title and in the text itself (selectable, read whole by a
 * screen reader), and a Copy button that portal.js shows and wires (`data-copy-target`); without
 * script the button stays hidden and the id is copied by selecting it.
 */
export function longId(value: string, what: string): SafeHtml {
  const id = uid('id')
  return html`<code class="id" id="${id}" title="${value}">${value}</code><button type="button" class="copy small" data-copy-target="${id}" aria-label="Copy ${what} ${value}" hidden>Copy</button>`
}
