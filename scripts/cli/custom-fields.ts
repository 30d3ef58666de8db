import { seg } from './client.ts'
import type { Resource } from './types.ts'
import { str } from './values.ts'

const TYPES = 'boolean, date, email, file, large_text, multi_select, number, phone, select, signature, text, textbox_list, url'

export const customFields: Resource = {
  name: 'custom-fields',
  summary: 'custom field definitions: create, list',
  commands: {
    create: {
      summary: 'define a custom field',
      usage: '<accountId> <key>',
      required: 2,
      options: {
        label: { type: 'string', help: 'display label (default: the key)' },
        type: { type: 'string', required: true, help: `one of ${TYPES}` },
      },
      run: ({ client, args, flags }) =>
        client.request('POST', `/accounts/${seg(args[0]!)}/custom-fields`, {
          key: args[1]!,
          label: str(flags, 'label') ?? args[1]!,
          type: str(flags, 'type'),
        }),
    },
    list: {
      summary: 'list the definitions',
      usage: '<accountId>',
      required: 1,
      run: ({ client, args }) => client.request('GET', `/accounts/${seg(args[0]!)}/custom-fields`),
    },
  },
}
