/**
 * The push relay: the Pub/Sub emulator pushes every subscription here (`/<subscription>`) because
 * it signs nothing; the relay adds what Pub/Sub adds in Google Cloud, an `Authorization: Bearer`
 * ID token for the subscription's declared `oidc_token` (service account email and audience,
 * none when Terraform declares none), and forwards the request unchanged (body, content type) to
 * the endpoint Terraform declares. Before that it does what Cloud Run does in front of the
 * service: a push whose identity holds no run.routes.invoke on the target service (the grants
 * infra/ declares) gets a 403 and never reaches the service. The service's status goes back to
 * the emulator, which acks a 2xx and retries anything else, as Pub/Sub does. Every push is
 * logged as one JSON line.
 */
import { appendFileSync } from 'node:fs'
import { listen, readBody, sendJson, type Listener } from './http.ts'
import { invokerRefusal, type Iam } from './iam.ts'
import type { OidcIssuer } from './oidc-issuer.ts'

export interface RelayRoute {
  subscription: string
  /** the service endpoint (loopback URL) */
  target: string
  /** the Cloud Run service the endpoint belongs to (its invoker grants apply), null for another URL */
  service: string | null
  oidc: { serviceAccountEmail: string; audience: string } | null
  ackDeadlineSeconds: number
}

export interface PushRelay {
  /** the push endpoint to give the emulator for a subscription */
  endpointFor(subscription: string): string
  close(): Promise<void>
}

/** One relayed push, as logged (the test reads these to see what the service answered). */
export interface RelayLogLine {
  time: string
  subscription: string
  target: string
  identity: string | null
  status: number
  ms: number
  error?: string
}

export async function startPushRelay(routes: RelayRoute[], issuer: OidcIssuer, iam: Iam, logFile: string): Promise<PushRelay> {
  const bySubscription = new Map(routes.map((r) => [r.subscription, r]))
  for (const r of routes) {
    const host = new URL(r.target).hostname
    if (host !== '127.0.0.1' && host !== 'localhost' && host !== '[::1]') throw new Error(`push relay: ${r.subscription} targets ${r.target}, not this machine`)
  }
  const log = (line: RelayLogLine) => appendFileSync(logFile, `${JSON.stringify(line)}\n`)
  const listener: Listener = await listen(async (req, res) => {
    const name = decodeURIComponent((req.url ?? '/').slice(1).split('?')[0]!)
    const route = bySubscription.get(name)
    if (!route || req.method !== 'POST') return sendJson(res, 404, { error: `no push subscription ${name}` })
    const body = await readBody(req)
    const headers: Record<string, string> = {
      'content-type': req.headers['content-type'] ?? 'application/json',
      'user-agent': 'APIs-Google; (+https://developers.google.com/webmasters/APIs-Google.html)',
    }
    if (route.oidc) headers.authorization = `Bearer ${await issuer.mint(route.oidc.serviceAccountEmail, route.oidc.audience)}`
    const started = Date.now()
    const base = { time: new Date().toISOString(), subscription: name, target: route.target, identity: route.oidc?.serviceAccountEmail ?? null }
    const refused = route.service === null ? null : invokerRefusal(iam, base.identity, route.service)
    if (refused) {
      log({ ...base, status: 403, ms: Date.now() - started, error: refused })
      res.writeHead(403, { 'content-type': 'text/plain' })
      res.end(refused)
      return
    }
    try {
      const answer = await fetch(route.target, {
        method: 'POST',
        headers,
        body: new Uint8Array(body),
        signal: AbortSignal.timeout(route.ackDeadlineSeconds * 1000),
      })
      const text = await answer.text()
      log({ ...base, status: answer.status, ms: Date.now() - started })
      res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' })
      res.end(text)
    } catch (err) {
      // unreachable or past the ack deadline: Pub/Sub counts it as a failed delivery and retries
      log({ ...base, status: 502, ms: Date.now() - started, error: (err as Error).message })
      sendJson(res, 502, { error: (err as Error).message })
    }
  })
  return {
    endpointFor: (subscription) => `${listener.origin}/${encodeURIComponent(subscription)}`,
    close: () => listener.close(),
  }
}
