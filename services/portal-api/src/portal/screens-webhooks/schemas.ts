import { Type } from 'typebox'

/*
 * The path parameters and the plain query of the webhook screens, one schema each (every route
 * here reads its typed request.params through one of these).
 */

export const IntegrationParams = Type.Object({ integrationId: Type.String({ minLength: 1, maxLength: 128 }) })
export const DeliveryParams = Type.Object({
  integrationId: Type.String({ minLength: 1, maxLength: 128 }),
  deliveryId: Type.String({ minLength: 1, maxLength: 128 }),
})
/** a page that shows a confirmation only: `?flash=` (page.ts reads it from the URL) */
export const FlashQuery = Type.Object({ flash: Type.Optional(Type.String({ maxLength: 64 })) })
