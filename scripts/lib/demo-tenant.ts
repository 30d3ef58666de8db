/**
 * The local stack's demo tenant: created once through the management API (exactly what an
 * operator would do), its one-time secrets kept in DATA_DIR/demo-credentials.json so later runs
 * print the same credentials instead of minting new ones.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join, relative, resolve, sep } from 'node:path'

/**
 * What the demo tenant needs of portal-api: fastify's `inject` (npm start, one process) or the
 * same call over HTTP (start:cloud, portal-api in its own process).
 */
export interface ManagementApi {
  inject(request: {
    method: 'GET' | 'POST' | 'PUT'
    url: string
    headers: Record<string, string>
    payload?: object
  }): Promise<{ statusCode: number; json(): unknown }>
}

export const DEMO_PUBLIC_ID = 'demo'
const DEMO_API_SOURCE = 'demo-api'
const DEMO_WEBHOOK_SOURCE = 'demo-webhook'
const DEMO_AUTHORIZED_DOMAIN = 'example.com'
const DEMO_CREDENTIALS_FILE = 'demo-credentials.json'

export interface DemoCredentials {
  public_id: string
  account_id: string
  api_key: string
  webhook_url: string
  webhook_token: string
  operator_token: string
  edge_url: string
  portal_url: string
  /** `source` of contacts pushed with the API key (the mint command names the contact by it) */
  api_source: string
  /** `source` of contacts pushed to the webhook URL */
  webhook_source: string
  /** a single-use portal sign-in link, minted at each start (never stored: it works once) */
  portal_sign_in?: { url: string; expires_at: string }
}

/** the demo's sign-in link works for an hour (the longest a link may) */
const DEMO_SIGN_IN_TTL_SECONDS = 3600

/** The credentials with a fresh portal sign-in link of the demo account. */
async function withSignInLink(options: DemoTenantOptions, credentials: DemoCredentials): Promise<DemoCredentials> {
  const link = await must(options.portal, options.operatorToken, 'POST', `/api/v1/admin/accounts/${credentials.account_id}/portal-links`, {
    ttl_seconds: DEMO_SIGN_IN_TTL_SECONDS,
  })
  return { ...credentials, portal_sign_in: { url: link.url as string, expires_at: link.expires_at as string } }
}

function demoCredentialsPath(dataDir: string): string {
  return join(dataDir, DEMO_CREDENTIALS_FILE)
}

export function readDemoCredentials(dataDir: string): DemoCredentials | null {
  const file = demoCredentialsPath(dataDir)
  if (!existsSync(file)) return null
  return JSON.parse(readFileSync(file, 'utf8')) as DemoCredentials
}

function writeDemoCredentials(dataDir: string, credentials: DemoCredentials): void {
  const file = demoCredentialsPath(dataDir)
  // write-then-rename: a crash mid-write never leaves a half file that blocks the next run
  writeFileSync(`${file}.tmp`, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 })
  renameSync(`${file}.tmp`, file)
}

async function call(
  portal: ManagementApi,
  operatorToken: string,
  method: 'GET' | 'POST' | 'PUT',
  url: string,
  payload?: object,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await portal.inject({ method, url, headers: { authorization: `Bearer ${operatorToken}` }, ...(payload ? { payload } : {}) })
  let body: Record<string, unknown> = {}
  try {
    body = res.json() as Record<string, unknown>
  } catch {
    // non-JSON answers are reported with their status below
  }
  return { status: res.statusCode, body }
}

async function must(portal: ManagementApi, operatorToken: string, method: 'POST' | 'PUT', url: string, payload: object): Promise<Record<string, unknown>> {
  const res = await call(portal, operatorToken, method, url, payload)
  if (res.status >= 300) throw new Error(`demo tenant: ${method} ${url} answered ${res.status} ${JSON.stringify(res.body)}`)
  return res.body
}

export interface DemoTenantOptions {
  portal: ManagementApi
  dataDir: string
  operatorToken: string
  edgeUrl: string
  portalUrl: string
  /** does the account of stored credentials still exist (the data folder may have been reset) */
  accountExists(accountId: string): Promise<boolean>
  /** the id of the account with this public id, if any (credentials file lost, account kept) */
  accountIdOf(publicId: string): Promise<string | null>
}

/**
 * Returns the demo credentials, creating the tenant on first run: account `demo` (or the
 * existing one), authorized domain example.com, an api connection with one key holding all
 * three scopes, and a webhook connection with its source URL and token.
 */
export async function ensureDemoTenant(options: DemoTenantOptions): Promise<{ credentials: DemoCredentials; created: boolean }> {
  const stored = readDemoCredentials(options.dataDir)
  if (stored && (await options.accountExists(stored.account_id))) {
    // the operator token and the ports may come from the environment and differ from last run
    const webhookUrl = stored.webhook_url.startsWith(stored.edge_url) ? options.edgeUrl + stored.webhook_url.slice(stored.edge_url.length) : stored.webhook_url
    const current: DemoCredentials = {
      ...stored,
      operator_token: options.operatorToken,
      edge_url: options.edgeUrl,
      portal_url: options.portalUrl,
      webhook_url: webhookUrl,
    }
    // the file says what this run uses: the CLI reads its portal URL and operator token from it
    if (JSON.stringify(current) !== JSON.stringify(stored)) writeDemoCredentials(options.dataDir, current)
    return { credentials: await withSignInLink(options, current), created: false }
  }
  const { portal, operatorToken } = options
  const created = await call(portal, operatorToken, 'POST', '/api/v1/admin/accounts', { public_id: DEMO_PUBLIC_ID, name: 'Demo' })
  let accountId: string
  if (created.status === 201) {
    accountId = created.body.id as string
  } else if (created.status === 409) {
    const found = await options.accountIdOf(DEMO_PUBLIC_ID)
    if (!found) throw new Error('demo tenant: public_id demo is taken but the account cannot be found')
    accountId = found
  } else {
    throw new Error(`demo tenant: POST /api/v1/admin/accounts answered ${created.status} ${JSON.stringify(created.body)}`)
  }
  const base = `/api/v1/admin/accounts/${accountId}`
  await must(portal, operatorToken, 'PUT', `${base}/authorized-domains`, { domains: [DEMO_AUTHORIZED_DOMAIN] })
  // a second run after a lost credentials file gets fresh slugs so it never collides
  const suffix = created.status === 201 ? '' : `-${Date.now().toString(36)}`
  const api = await must(portal, operatorToken, 'POST', `${base}/connections`, { type: 'api', source: `${DEMO_API_SOURCE}${suffix}`, name: 'Demo API' })
  const key = await must(portal, operatorToken, 'POST', `${base}/connections/${api.id as string}/keys`, {
    scopes: ['contacts:write', 'contacts:links:write', 'contacts:read'],
    name: 'demo key',
  })
  const webhook = await must(portal, operatorToken, 'POST', `${base}/connections`, {
    type: 'webhook',
    source: `${DEMO_WEBHOOK_SOURCE}${suffix}`,
    name: 'Demo webhook',
  })
  const credentials: DemoCredentials = {
    public_id: DEMO_PUBLIC_ID,
    account_id: accountId,
    api_key: key.key as string,
    webhook_url: webhook.webhook_url as string,
    webhook_token: webhook.token as string,
    operator_token: operatorToken,
    edge_url: options.edgeUrl,
    portal_url: options.portalUrl,
    api_source: api.source as string,
    webhook_source: webhook.source as string,
  }
  writeDemoCredentials(options.dataDir, credentials)
  return { credentials: await withSignInLink(options, credentials), created: true }
}

/**
 * `npm run cli --`, told where this stack's credentials file is when it is not the CLI's default
 * (DATA_DIR, default .data: `npm start`'s), so the printed command works as printed.
 */
function cliCommand(dataDir: string): string {
  const dir = resolve(dataDir)
  if (dir === resolve('.data')) return 'npm run cli --'
  const shown = dir.startsWith(`${process.cwd()}${sep}`) ? relative(process.cwd(), dir) : dir
  return `DATA_DIR=${/^[\w./-]+$/.test(shown) ? shown : `'${shown.replaceAll("'", `'\\''`)}'`} npm run cli --`
}

/** Text printed at start: URLs, credentials and copy-paste curl commands that work as printed. */
export function demoBanner(
  c: DemoCredentials,
  urls: { upsertWorker: string; dispatcher: string },
  created: boolean,
  dataDir: string,
  backends: string,
): string {
  const key = c.api_key
  const lines = [
    '',
    `Local stack ready (${backends}; data in ${dataDir})`,
    `  edge-ingest         ${c.edge_url}   (any <public_id>.edge.localhost)`,
    `  portal-api          ${c.portal_url}`,
    `  upsert-worker       ${urls.upsertWorker}`,
    `  webhook-dispatcher  ${urls.dispatcher}`,
    '',
    `Demo tenant ${created ? 'created' : 'loaded'} (${demoCredentialsPath(dataDir)}):`,
    `  public_id       ${c.public_id}`,
    `  account_id      ${c.account_id}`,
    `  api key         ${key}   (contacts:write, contacts:links:write, contacts:read)`,
    `  webhook URL     ${c.webhook_url}`,
    `  webhook token   ${c.webhook_token}`,
    `  operator token  ${c.operator_token}`,
    '',
    '1. Push a contact with the API key:',
    `  curl -sS ${c.edge_url}/v1/contacts \\`,
    `    -H 'Authorization: Bearer ${key}' -H 'content-type: application/json' \\`,
    `    -d '{"contacts":[{"external_id":"ada-1","email":"ada@example.com","first_name":"Ada","last_name":"Lovelace"}]}'`,
    '',
    // the 202 of step 1 means queued: pasted at once, this call can arrive before the worker stored the contact
    '2. Mint a tracked link for that contact (once step 1 is applied, a moment after its 202; before, 404 "contact not found"):',
    `  curl -sS ${c.portal_url}/api/contacts/links \\`,
    `    -H 'Authorization: Bearer ${key}' -H 'content-type: application/json' \\`,
    `    -d '{"source":"${c.api_source}","externalId":"ada-1","destinationUrl":"https://example.com/pricing"}'`,
    '',
    '3. Push a contact to the webhook source URL with its token:',
    `  curl -sS ${c.webhook_url} \\`,
    `    -H 'x-webhook-token: ${c.webhook_token}' -H 'content-type: application/json' \\`,
    `    -d '{"contacts":[{"external_id":"grace-1","email":"grace@example.com","first_name":"Grace"}]}'`,
    '',
    'Read them back:',
    `  curl -sS '${c.portal_url}/api/v1/contacts?include=contact_handles' -H 'Authorization: Bearer ${key}'`,
    '',
    ...(c.portal_sign_in
      ? [
          'Sign in to the portal as the demo tenant (open in a browser; works once, until ' +
            `${c.portal_sign_in.expires_at}; another: ${cliCommand(dataDir)} portal link ${c.account_id}):`,
          `  ${c.portal_sign_in.url}`,
          '',
        ]
      : []),
    'Stop with Ctrl-C.',
    '',
  ]
  return lines.join('\n')
}
