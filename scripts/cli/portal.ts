import { ApiError, seg, type PortalClient } from './client.ts'
import { CliError, type Resource } from './types.ts'
import { defined, int } from './values.ts'

/** Account ids are UUIDs; public ids are DNS labels (which a UUID also is, so an id is tried first). */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const ACCOUNT_PAGE = 200

/**
 * The account id of `account`, given as its id or its public id (what the banner and the edge
 * host show). The management API has no lookup by public id, so the accounts list is read page
 * by page (ordered by id, 200 a page) until the account is found: an operator's command, run once.
 */
async function accountIdOf(client: PortalClient, account: string): Promise<string> {
  if (UUID.test(account)) {
    try {
      return ((await client.request('GET', `/accounts/${seg(account)}`)) as { id: string }).id
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 404)) throw err
    }
  }
  // public ids are stored lower-case
  const wanted = account.toLowerCase()
  let after: string | undefined
  for (;;) {
    const page = (await client.request('GET', '/accounts', undefined, { limit: ACCOUNT_PAGE, after })) as {
      data: Array<{ id: string; public_id: string }>
      next_after: string | null
    }
    const found = page.data.find((a) => a.public_id === wanted)
    if (found) return found.id
    if (page.next_after === null) throw new CliError(`no account has the id or public id ${account}`)
    after = page.next_after
  }
}

/** Portal access of an account (docs/portal.md): sign-in links and ending sessions. */
export const portal: Resource = {
  name: 'portal',
  summary: 'portal access: mint a sign-in link, end every session of an account',
  commands: {
    link: {
      summary: 'mint a single-use sign-in link; prints {url, expires_at} (open the url in a browser)',
      usage: '<accountId|publicId>',
      required: 1,
      options: {
        ttl: { type: 'string', help: 'seconds the link works (60..3600, default 900)' },
      },
      details: [
        "The link works once: following it signs the browser in to the account's portal.",
        'The account is given by its id or by its public id (e.g. demo).',
      ],
      run: async ({ client, args, flags }) => {
        const ttl = int(flags, 'ttl')
        const accountId = await accountIdOf(client, args[0]!)
        return client.request('POST', `/accounts/${seg(accountId)}/portal-links`, defined({ ttl_seconds: ttl }))
      },
    },
    'end-sessions': {
      summary: 'end every portal session of the account (and void its unused sign-in links)',
      usage: '<accountId|publicId>',
      required: 1,
      run: async ({ client, args }) => client.request('DELETE', `/accounts/${seg(await accountIdOf(client, args[0]!))}/portal-sessions`),
    },
  },
}
