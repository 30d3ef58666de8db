# Secrets the services read at start-up (operator token, key pepper: as environment variables,
# see service-env.tf) and at run time (link signing keys: through the Secret Manager API).
#
# No secret value is ever in Terraform state or plan: each first version is written once from an
# ephemeral random value through the write-only argument `secret_data_wo` (Terraform >= 1.11).
# Terraform stores only `secret_data_wo_version = 1`, and since it can neither read nor compare a
# write-only value, later applies leave the secret alone: a rotation (a new version added with
# `gcloud secrets versions add`, docs/operations.md) stays in force, and so does disabling the
# first version afterwards (`enabled` is ignored below).

ephemeral "random_password" "operator_token" {
  length  = 48
  special = false
}

ephemeral "random_password" "key_pepper" {
  length  = 64
  special = false
}

ephemeral "random_bytes" "link_signing_key" {
  length = 32
}

# the Standard Webhooks secret (`whsec_<base64>`) that signs operational events to
# var.operator_events_url (shared/src/domain/operations/target.ts); give it to the operator's receiver
ephemeral "random_bytes" "operator_events_secret" {
  length = 24
}

locals {
  secret_ids = toset(["operator-token", "key-pepper", "link-signing-keys", "operator-events-secret", "alert-smtp-url"])

  # secrets a service reads through the Secret Manager API while running (not as environment
  # variables): link-signing-keys, to mint signed links (portal-api) and to resolve them in
  # visits (webhook-dispatcher). shared/src/domain/links/signing-keys.ts
  runtime_secret_readers = {
    "link-signing-keys" = ["portal-api", "webhook-dispatcher"]
    # operational events are deliveries: the dispatcher signs them when it sends them
    "operator-events-secret" = ["webhook-dispatcher"]
  }

  # every (secret, service) pair that gets secretAccessor: the environment each service is given
  # (service-env.tf) plus the run-time readers above, and nothing else
  secret_grants = merge(
    merge([
      for service, vars in local.service_secret_env : {
        for variable, secret in vars : "${secret}/${service}" => { secret = secret, reader = service }
      }
    ]...),
    merge([
      for secret, readers in local.runtime_secret_readers : {
        for reader in readers : "${secret}/${reader}" => { secret = secret, reader = reader }
      }
    ]...),
  )
}

resource "google_secret_manager_secret" "platform" {
  for_each  = local.secret_ids
  secret_id = each.key
  replication {
    auto {}
  }
  depends_on = [google_project_service.enabled]
}

resource "google_secret_manager_secret_version" "initial" {
  for_each = local.secret_ids
  secret   = google_secret_manager_secret.platform[each.key].id
  secret_data_wo = {
    "operator-token"         = ephemeral.random_password.operator_token.result
    "key-pepper"             = ephemeral.random_password.key_pepper.result
    "link-signing-keys"      = jsonencode({ current = "k1", keys = { k1 = ephemeral.random_bytes.link_signing_key.base64 } })
    "operator-events-secret" = "whsec_${ephemeral.random_bytes.operator_events_secret.base64}"
    # the SMTP relay of the tenants' alert emails (ALERT_SMTP_URL, docs/deploy.md "Alert emails"):
    # a placeholder on the reserved .invalid domain, refused by the services with ALERT_EMAIL=smtp;
    # an operator adds the relay's URL with `gcloud secrets versions add alert-smtp-url`, so the
    # relay's credentials never pass through Terraform
    "alert-smtp-url" = "smtp://unset.invalid:587"
  }[each.key]
  # constant: Terraform never writes a second value (rotation is gcloud's, docs/operations.md)
  secret_data_wo_version = 1
  # if this resource is ever replaced, the version it held stays readable instead of being destroyed
  deletion_policy = "ABANDON"
  lifecycle {
    # an operator disables the first version after a rotation; Terraform must not re-enable it
    ignore_changes = [enabled]
  }
}

resource "google_secret_manager_secret_iam_member" "reader" {
  for_each  = local.secret_grants
  secret_id = google_secret_manager_secret.platform[each.value.secret].id
  role      = "roles/secretmanager.secretAccessor"
  member    = "serviceAccount:${local.sa[each.value.reader]}"
}
