import { html, type SafeHtml } from './html.ts'

/** How a badge reads: ok, bad, warn (a colour each) or neutral (the accent). */
export type BadgeTone = 'ok' | 'bad' | 'warn' | 'neutral'

/**
 * A state in one word or two (portal.css `.badge`): the words say it, the colour repeats it, so
 * colour carries nothing alone. The one badge of every screen: the delivery log, the debuggers.
 */
export function badge(text: string | number, tone: BadgeTone = 'neutral'): SafeHtml {
  return html`<span class="${tone === 'neutral' ? 'badge' : `badge ${tone}`}">${text}</span>`
}
