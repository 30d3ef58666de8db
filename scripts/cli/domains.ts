import { seg } from './client.ts'
import type { Resource } from './types.ts'

export const domains: Resource = {
  name: 'domains',
  summary: 'authorized link destination domains: set, get',
  commands: {
    set: {
      summary: 'replace the list (no domains: clear it); each domain covers its subdomains',
      usage: '<accountId> [domain...]',
      required: 1,
      variadic: true,
      run: ({ client, args }) => client.request('PUT', `/accounts/${seg(args[0]!)}/authorized-domains`, { domains: args.slice(1) }),
    },
    get: {
      summary: 'show the list',
      usage: '<accountId>',
      required: 1,
      run: ({ client, args }) => client.request('GET', `/accounts/${seg(args[0]!)}/authorized-domains`),
    },
  },
}
