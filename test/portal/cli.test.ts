import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import type { App } from '@lsv/shared/http/base-app.ts'
import { buildApp } from '../../services/portal-api/src/app.ts'
import { freePort } from '../../scripts/lib/emulators.ts'
import { createIngestFixture, type IngestFixture } from '../ingest/support/harness.ts'
import { OPERATOR_TOKEN } from '../management/harness.ts'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const run = promisify(execFile)

/** `npm run cli -- portal link <account>` and `portal end-sessions <account>` against a listening portal. */
describe('CLI: portal', () => {
  let fixture: IngestFixture
  let app: App
  let origin: string
  const env = () => ({ ...process.env, PORTAL_URL: origin, OPERATOR_TOKEN })

  beforeAll(async () => {
    const port = await freePort()
    origin = `http://127.0.0.1:${port}`
    fixture = await createIngestFixture({ config: { portalBaseUrl: origin } })
    app = await buildApp(fixture.h.deps)
    await app.listen({ host: '127.0.0.1', port })
  })
  afterAll(async () => {
    await app?.close()
    await fixture?.close()
  })

  it('portal link prints a sign-in link that signs a browser in once; end-sessions ends the session', async () => {
    const { stdout } = await run('npm', ['run', 'cli', '--', 'portal', 'link', fixture.t.account.id, '--ttl', '120'], { cwd: ROOT, env: env(), timeout: 60_000 })
    const printed = JSON.parse(stdout.slice(stdout.indexOf('{')))
    expect(printed.url.startsWith(`${origin}/portal/sign-in?token=`)).toBe(true)
    expect(Date.parse(printed.expires_at) - Date.now()).toBeGreaterThan(60_000)
    expect(Date.parse(printed.expires_at) - Date.now()).toBeLessThanOrEqual(120_000)

    const signIn = await fetch(printed.url, { redirect: 'manual' })
    expect(signIn.status).toBe(303)
    const cookie = signIn.headers.getSetCookie()[0]!.split(';')[0]!
    const page = () => fetch(`${origin}/portal/`, { headers: { cookie } }).then((r) => r.text())
    expect(await page()).toContain(`<code>${fixture.t.publicId}</code>`)

    const ended = await run(process.execPath, ['scripts/cli.ts', 'portal', 'end-sessions', fixture.t.account.id], { cwd: ROOT, env: env(), timeout: 30_000 })
    expect(JSON.parse(ended.stdout)).toEqual({ ok: true })
    expect(await page()).toContain('Not signed in')
  })

  it('refuses a ttl out of range with the API\'s issue, exit code 1', async () => {
    const err = await run(process.execPath, ['scripts/cli.ts', 'portal', 'link', fixture.t.account.id, '--ttl', '30'], { cwd: ROOT, env: env(), timeout: 30_000 })
      .then(() => null, (e: { code: number; stderr: string }) => e)
    expect(err?.code).toBe(1)
    expect(err?.stderr).toContain('error: invalid payload (HTTP 400)')
    expect(err?.stderr).toContain('/ttl_seconds')
  })
})
