import { seg } from './client.ts'
import type { Resource } from './types.ts'
import { defined, int } from './values.ts'

/** Portal access of an account (docs/portal.md): sign-in links and ending sessions. */
export const portal: Resource = {
  name: 'portal',
  summary: 'portal access: mint a sign-in link, end every session of an account',
  commands: {
    link: {
      summary: 'mint a single-use sign-in link; prints {url, expires_at} (open the url in a browser)',
      usage: '<accountId>',
      required: 1,
      options: {
        ttl: { type: 'string', help: 'seconds the link works (60..3600, default 900)' },
      },
      details: ['The link works once: following it signs the browser in to the account\'s portal.'],
      run: ({ client, args, flags }) => client.request('POST', `/accounts/${seg(args[0]!)}/portal-links`, defined({ ttl_seconds: int(flags, 'ttl') })),
    },
    'end-sessions': {
      summary: 'end every portal session of the account (and void its unused sign-in links)',
      usage: '<accountId>',
      required: 1,
      run: ({ client, args }) => client.request('DELETE', `/accounts/${seg(args[0]!)}/portal-sessions`),
    },
  },
}
