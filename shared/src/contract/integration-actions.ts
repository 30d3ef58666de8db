import { Type, type Static } from 'typebox'
import { DEFAULT_ROTATION_GRACE_SECONDS, MAX_GRACE_SECONDS } from './admin.ts'
import { Nullable } from './common.ts'

/**
 * Wire schemas of the integration actions beyond create/update (docs/management-api.md): signing
 * secret rotation with a grace period, and a test `visitor.identified` event.
 */

export const RotateSecretBody = Type.Object(
  {
    grace_seconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_GRACE_SECONDS,
        default: DEFAULT_ROTATION_GRACE_SECONDS,
        description: 'how long the previous secret keeps signing too (both signatures are sent); 0 ends it at once',
      }),
    ),
  },
  { title: 'RotateSigningSecretBody', additionalProperties: false },
)
export type RotateSecretBody = Static<typeof RotateSecretBody>

export const RotatedSecret = Type.Object(
  {
    id: Type.String(),
    signing_secret: Type.String({ description: 'the new Standard Webhooks secret (`whsec_…`), shown once' }),
    previous_expires_at: Nullable(Type.String({ format: 'date-time' }), 'when the previous secret stops signing; null when it already has'),
  },
  { title: 'RotatedSigningSecret', additionalProperties: false },
)

export const TestEventSent = Type.Object(
  {
    ok: Type.Literal(true),
    delivery_id: Type.String(),
    event_id: Type.String({ description: "starts with `evt_test_`; the body's `classification` is `test`" }),
    status: Type.String(),
  },
  { title: 'TestEventSent', additionalProperties: false },
)
