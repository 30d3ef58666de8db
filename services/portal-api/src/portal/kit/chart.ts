import { html, type SafeHtml } from './html.ts'

/** One hour of the chart: attempts answered 200, and the others (an error answer or none). */
export interface OutcomeHour {
  ok: number
  failed: number
}

const BAR = 14
const GAP = 4
const HEIGHT = 90
const AXIS = 14

/**
 * Deliveries by outcome over the last 24 hours, drawn on the server as an SVG (no script): one
 * stacked bar an hour, oldest on the left, scaled to the busiest hour. The figure's caption and the
 * image's text alternative say the same in words, so colour carries nothing alone. The hours come
 * from counts the page already read (bounded); the chart reads nothing itself.
 */
export function outcomeChart(id: string, hours: readonly OutcomeHour[]): SafeHtml {
  const ok = hours.reduce((n, h) => n + h.ok, 0)
  const failed = hours.reduce((n, h) => n + h.failed, 0)
  const max = Math.max(1, ...hours.map((h) => h.ok + h.failed))
  const width = hours.length * (BAR + GAP)
  const bars = hours.map((h, i) => {
    const x = i * (BAR + GAP)
    const okH = Math.round((h.ok / max) * HEIGHT)
    const badH = Math.round((h.failed / max) * HEIGHT)
    return html`${okH > 0 ? html`<rect class="ok" x="${x}" y="${HEIGHT - okH}" width="${BAR}" height="${okH}"/>` : ''}${badH > 0 ? html`<rect class="bad" x="${x}" y="${HEIGHT - okH - badH}" width="${BAR}" height="${badH}"/>` : ''}`
  })
  const failingHours = hours.filter((h) => h.failed > 0).length
  const label = `Deliveries by outcome, last 24 hours: ${ok} succeeded, ${failed} failed${failed > 0 ? ` (in ${failingHours} of ${hours.length} hours)` : ''}.`
  return html`<figure class="chart" id="${id}">
<svg role="img" aria-label="${label}" viewBox="0 0 ${width} ${HEIGHT + AXIS}" focusable="false"><title>${label}</title>
<line class="axis" x1="0" y1="${HEIGHT + 0.5}" x2="${width}" y2="${HEIGHT + 0.5}"/>${bars}
<text x="0" y="${HEIGHT + AXIS - 2}">24 h ago</text><text x="${width}" y="${HEIGHT + AXIS - 2}" text-anchor="end">now</text>
</svg>
<figcaption><span class="legend-ok">${ok} succeeded</span> · <span class="legend-bad">${failed} failed</span> · one bar an hour</figcaption>
</figure>`
}
