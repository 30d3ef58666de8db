import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import type { App } from '@lsv/shared/http/base-app.ts'
import { buildApp } from '../../services/portal-api/src/app.ts'
import { freePort } from '../../scripts/lib/free-port.ts'
import { createIngestFixture, type IngestFixture } from '../ingest/support/harness.ts'
import { ADMIN, OPERATOR, OPERATOR_TOKEN } from '../management/harness.ts'

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
    const { stdout } = await run('npm', ['run', 'cli', '--', 'portal', 'link', fixture.t.account.id, '--ttl', '120'], {
      cwd: ROOT,
      env: env(),
      timeout: 60_000,
    })
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

  it('portal link takes the public id too, found on any page of the accounts list; an unknown one is exit code 1', async () => {
    // more accounts than one page of GET /accounts (200); the one with the greatest id is on the last page
    for (let i = 0; i < 210; i++) {
      const res = await app.inject({ method: 'POST', url: ADMIN, headers: OPERATOR, payload: { public_id: `cli-many-${i}` } })
      expect(res.statusCode).toBe(201)
    }
    const all: Array<{ id: string; public_id: string }> = []
    for (let after: string | null = ''; after !== null; ) {
      const page = (await app.inject({ method: 'GET', url: `${ADMIN}?limit=200${after ? `&after=${after}` : ''}`, headers: OPERATOR })).json() as {
        data: typeof all
        next_after: string | null
      }
      all.push(...page.data)
      after = page.next_after
    }
    const last = all.at(-1)!
    expect(all.length).toBeGreaterThan(200)
    for (const [given, account] of [
      [fixture.t.publicId.toUpperCase(), fixture.t.account.id],
      [last.public_id, last.id],
    ] as const) {
      const { stdout } = await run(process.execPath, ['scripts/cli.ts', 'portal', 'link', given], { cwd: ROOT, env: env(), timeout: 30_000 })
      const signIn = await fetch(JSON.parse(stdout).url, { redirect: 'manual' })
      expect(signIn.status).toBe(303)
      const cookie = signIn.headers.getSetCookie()[0]!.split(';')[0]!
      const home = await (await fetch(`${origin}/portal/`, { headers: { cookie } })).text()
      const publicId = all.find((a) => a.id === account)!.public_id
      expect(home, given).toContain(`<code>${publicId}</code>`)
    }
    const err = await run(process.execPath, ['scripts/cli.ts', 'portal', 'link', 'no-such-account'], { cwd: ROOT, env: env(), timeout: 30_000 }).then(
      () => null,
      (e: { code: number; stderr: string }) => e,
    )
    expect(err?.code).toBe(1)
    expect(err?.stderr).toContain('no account has the id or public id no-such-account')
  })

  it("refuses a ttl out of range with the API's issue, exit code 1", async () => {
    const err = await run(process.execPath, ['scripts/cli.ts', 'portal', 'link', fixture.t.account.id, '--ttl', '30'], {
      cwd: ROOT,
      env: env(),
      timeout: 30_000,
    }).then(
      () => null,
      (e: { code: number; stderr: string }) => e,
    )
    expect(err?.code).toBe(1)
    expect(err?.stderr).toContain('error: invalid payload (HTTP 400)')
    expect(err?.stderr).toContain('/ttl_seconds')
  })
})
