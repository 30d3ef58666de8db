import { html, type SafeHtml } from './html.ts'

/**
 * What a list screen shows when it has nothing yet: one sentence that says what fills it and a
 * link to the action (a form on the same page or the screen where it is done), so a new tenant
 * is never left at an empty table (issue 22, 8).
 */
export function emptyState(sentence: string, action: { href: string; text: string }): SafeHtml {
  return html`<div class="empty"><p>${sentence} <a href="${action.href}">${action.text}</a></p></div>`
}
