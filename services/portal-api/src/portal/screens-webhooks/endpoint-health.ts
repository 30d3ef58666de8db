import type { EndpointHealth } from '@lsv/shared/domain/webhooks/endpoint-health.ts'
import { html, type SafeHtml } from '../kit/page.ts'
import { help } from '../kit/ui.ts'
import { when } from '../kit/time.ts'

/*
 * Health at a glance (issue 22 job 5): the figures come from the endpoint's health counters
 * (@lsv/shared/domain/webhooks/endpoint-health.ts, kept by the delivery listener as attempts are
 * recorded): one read of 50 counters per endpoint, whatever its traffic.
 */
const HOURS = 24

/** The success rate in words: "98 %", or "no attempts" (never a made-up 100 %). */
function rateText(h: EndpointHealth): string {
  const total = h.succeeded + h.failed
  if (total === 0) return 'no attempts'
  return `${Math.floor((h.succeeded / total) * 1000) / 10} %`
}

const lastTime = (iso: string | null): SafeHtml | string => (iso ? when(iso) : 'never')

/**
 * The 24-hour sparkline: one bar per hour, its height the attempts of that hour (scaled to the
 * busiest), the failed part on top in the failure colour. An image with a text alternative that
 * says the same in words (totals and the hours with failures), so colour carries nothing alone.
 */
function sparkline(h: EndpointHealth): SafeHtml {
  const max = Math.max(1, ...h.hourly.map((b) => b.ok + b.failed))
  const W = 4
  const GAP = 1
  const H = 20
  const bars = h.hourly.map((b, i) => {
    const x = i * (W + GAP)
    const okH = Math.round((b.ok / max) * H)
    const badH = Math.round((b.failed / max) * H)
    return html`${okH > 0 ? html`<rect class="ok" x="${x}" y="${H - okH}" width="${W}" height="${okH}"/>` : ''}${badH > 0 ? html`<rect class="bad" x="${x}" y="${H - okH - badH}" width="${W}" height="${badH}"/>` : ''}${okH + badH === 0 ? html`<rect class="none" x="${x}" y="${H - 1}" width="${W}" height="1"/>` : ''}`
  })
  const failingHours = h.hourly.filter((b) => b.failed > 0).length
  const label = `Last 24 hours: ${h.succeeded} attempts succeeded, ${h.failed} failed${h.failed > 0 ? `, in ${failingHours} of 24 hours` : ''}.`
  return html`<svg class="spark" role="img" aria-label="${label}" viewBox="0 0 ${HOURS * (W + GAP)} ${H}" width="${HOURS * (W + GAP) * 2}" height="${H * 1.5}" focusable="false"><title>${label}</title>${bars}</svg>`
}

/** The compact cell of the endpoint list: rate, sparkline. */
export function healthCell(h: EndpointHealth): SafeHtml {
  const bad = h.failed > 0 && h.failed >= h.succeeded
  return html`<span class="${bad ? 'rate bad' : 'rate'}">${rateText(h)}</span> ${sparkline(h)}`
}

/** The endpoint page's section: the figures, the sparkline and what they are computed from. */
export function healthSection(h: EndpointHealth): SafeHtml {
  const bad = h.failed > 0 && h.failed >= h.succeeded
  return html`<section aria-labelledby="health-h" id="health">
<h2 id="health-h">Health</h2>
<dl class="stats">
<div><dt>Success rate (24 h)</dt><dd${bad ? html` class="bad"` : ''} id="health-rate">${rateText(h)}</dd></div>
<div><dt>Last success</dt><dd class="when" id="health-last-success">${lastTime(h.lastSuccess)}</dd></div>
<div><dt>Last failure</dt><dd class="when" id="health-last-failure">${lastTime(h.lastFailure)}</dd></div>
</dl>
<p>${sparkline(h)}</p>
${help('Attempts of the last 24 hours, one bar per hour.', 'Oldest on the left, the current hour last; a failure is any answer but 200, or no answer.')}
</section>`
}
