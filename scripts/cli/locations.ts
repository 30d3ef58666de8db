import { seg } from './client.ts'
import type { Resource } from './types.ts'

const locationsOf = (args: string[]) => `/accounts/${seg(args[0]!)}/connections/${seg(args[1]!)}/locations`

export const locations: Resource = {
  name: 'locations',
  summary: 'locations of the partnercrm connection: add, remove',
  commands: {
    add: {
      summary: 'connect a location; prints its token (once) and webhook_url',
      usage: '<accountId> <connectionId> <locationId>',
      required: 3,
      run: ({ client, args }) => client.request('POST', locationsOf(args), { location_id: args[2]! }),
    },
    remove: {
      summary: 'disconnect a location (no longer active)',
      usage: '<accountId> <connectionId> <locationId>',
      required: 3,
      run: ({ client, args }) => client.request('DELETE', `${locationsOf(args)}/${seg(args[2]!)}`),
    },
  },
}
