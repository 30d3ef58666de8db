import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { buildApp as buildWorker } from '../../services/upsert-worker/src/app.ts'
import { buildApp as buildDispatcher } from '../../services/webhook-dispatcher/src/app.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { INFRA_DIR } from './hcl.ts'
import { TOPICS } from '@lsv/shared/model/topics.ts'

/**
 * The push subscriptions Terraform creates must target routes the services actually serve:
 * a mismatch would make Pub/Sub retry every message into a 404 until it dead-letters.
 */
describe('Pub/Sub push endpoints in infra/pubsub.tf', () => {
  let deps: Awaited<ReturnType<typeof createTestDeps>>
  const apps: Record<string, { hasRoute(o: { method: string; url: string }): boolean; close(): Promise<unknown> }> = {}

  beforeAll(async () => {
    deps = await createTestDeps()
    apps['upsert-worker'] = await buildWorker(deps)
    apps['webhook-dispatcher'] = await buildDispatcher(deps)
    for (const app of Object.values(apps)) await (app as unknown as { ready(): Promise<unknown> }).ready()
  })
  afterAll(async () => {
    for (const app of Object.values(apps)) await app.close()
    await deps.cleanup()
  })

  it('each push subscription targets a POST route of its service', () => {
    const text = readFileSync(join(INFRA_DIR, 'pubsub.tf'), 'utf8')
    const entries = [...text.matchAll(/"([a-z-]+)"\s*=\s*\{\s*service\s*=\s*"([a-z-]+)",\s*path\s*=\s*"([^"]+)"/g)]
    expect(entries.map((m) => m[1]).sort()).toEqual(['contact-batches', 'visit-events'])
    for (const [, topic, service, path] of entries) {
      const app = apps[service!]
      expect(app, `${topic}: unknown service ${service}`).toBeDefined()
      expect(app!.hasRoute({ method: 'POST', url: path! }), `${topic}: ${service} does not serve POST ${path}`).toBe(true)
    }
  })

  it("each dead-letter topic's alerts subscription targets a POST route of the dispatcher", () => {
    const text = readFileSync(join(INFRA_DIR, 'pubsub.tf'), 'utf8')
    const alerts = text.slice(text.indexOf('resource "google_pubsub_subscription" "dead_letter_alerts"'))
    const endpoint = /push_endpoint\s*=\s*"\$\{local\.service_url\["([a-z-]+)"\]\}([^"]+)"/.exec(alerts)
    // mutation: the route renamed in dead-letters-push.ts (or the endpoint in pubsub.tf) -> no such route
    expect(endpoint?.[1]).toBe('webhook-dispatcher')
    for (const topic of TOPICS) {
      const path = endpoint![2]!.replace('${each.value}', topic)
      expect(apps['webhook-dispatcher']!.hasRoute({ method: 'POST', url: path }), `dispatcher does not serve POST ${path}`).toBe(true)
    }
  })
})
