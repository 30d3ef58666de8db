/** Where the webhook screens live: the list, and one webhook's page (the others hang under it). */
export const WEBHOOKS_PATH = '/portal/webhooks'
export const webhookPath = (id: string) => `${WEBHOOKS_PATH}/${encodeURIComponent(id)}`
