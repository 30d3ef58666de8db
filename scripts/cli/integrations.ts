import { seg } from './client.ts'
import type { Resource } from './types.ts'
import { bool, defined, either, int, str } from './values.ts'

const TIER_OPTIONS = {
  'contact-handles': { type: 'boolean', help: 'tier 2 on (--no-contact-handles: off)' },
  'sensitive-traits': { type: 'boolean', help: 'tier 3 on (--no-sensitive-traits: off)' },
} as const

function tiersOf(flags: Record<string, unknown>) {
  const t = defined({ contact_handles: bool(flags as never, 'contact-handles'), sensitive_traits: bool(flags as never, 'sensitive-traits') })
  return Object.keys(t).length > 0 ? t : undefined
}

export const integrations: Resource = {
  name: 'integrations',
  summary: 'outbound visitor.identified integrations: create, get, list, update',
  commands: {
    create: {
      summary: 'create an integration; prints its signing secret once',
      usage: '<accountId>',
      required: 1,
      options: {
        url: { type: 'string', required: true, help: 'receiver URL' },
        'payload-version': { type: 'string', help: '1 or 2 (default 2, the contract body)' },
        ...TIER_OPTIONS,
      },
      run: ({ client, args, flags }) =>
        client.request(
          'POST',
          `/accounts/${seg(args[0]!)}/integrations`,
          defined({
            url: str(flags, 'url'),
            payload_version: int(flags, 'payload-version') ?? 2,
            tiers: tiersOf(flags),
          }),
        ),
    },
    list: {
      summary: 'list the integrations of an account',
      usage: '<accountId>',
      required: 1,
      run: ({ client, args }) => client.request('GET', `/accounts/${seg(args[0]!)}/integrations`),
    },
    get: {
      summary: 'show one integration (never its secret)',
      usage: '<accountId> <integrationId>',
      required: 2,
      run: ({ client, args }) => client.request('GET', `/accounts/${seg(args[0]!)}/integrations/${seg(args[1]!)}`),
    },
    update: {
      summary: 'change an integration',
      usage: '<accountId> <integrationId>',
      required: 2,
      options: {
        url: { type: 'string', help: 'receiver URL' },
        'payload-version': { type: 'string', help: '1 or 2' },
        active: { type: 'boolean', help: 'enable (also after the platform disabled it)' },
        inactive: { type: 'boolean', help: 'disable' },
        ...TIER_OPTIONS,
      },
      run: ({ client, args, flags }) =>
        client.request(
          'PATCH',
          `/accounts/${seg(args[0]!)}/integrations/${seg(args[1]!)}`,
          defined({
            url: str(flags, 'url'),
            payload_version: int(flags, 'payload-version'),
            tiers: tiersOf(flags),
            active: either(flags, 'active', 'inactive'),
          }),
        ),
    },
  },
}
