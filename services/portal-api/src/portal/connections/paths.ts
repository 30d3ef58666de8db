/** The connection screens' paths (one place: the views and the mapping review both link them). */
export const CONNECTIONS_PATH = '/portal/connections'
export const connectionPath = (id: string) => `${CONNECTIONS_PATH}/${encodeURIComponent(id)}`
