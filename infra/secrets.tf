# Secrets the services read at start-up (operator token, key pepper) and at run time (link
# signing keys). Values are generated here once; rotation adds versions (docs/operations.md).

resource "random_password" "operator_token" {
  length  = 48
  special = false
}

resource "random_password" "key_pepper" {
  length  = 64
  special = false
}

resource "random_bytes" "link_signing_key" {
  length = 32
}

locals {
  secrets = {
    "operator-token"    = random_password.operator_token.result
    "key-pepper"        = random_password.key_pepper.result
    "link-signing-keys" = jsonencode({ current = "k1", keys = { k1 = random_bytes.link_signing_key.base64 } })
  }
  # which service reads which secret
  secret_readers = {
    "operator-token"    = ["portal-api", "webhook-dispatcher"]
    "key-pepper"        = ["edge-ingest", "portal-api", "upsert-worker", "webhook-dispatcher"]
    "link-signing-keys" = ["portal-api", "webhook-dispatcher"]
  }
  secret_grants = merge([
    for secret, readers in local.secret_readers : {
      for reader in readers : "${secret}/${reader}" => { secret = secret, reader = reader }
    }
  ]...)
}

resource "google_secret_manager_secret" "platform" {
  for_each  = local.secrets
  secret_id = each.key
  replication {
    auto {}
  }
  depends_on = [google_project_service.enabled]
}

resource "google_secret_manager_secret_version" "initial" {
  for_each    = local.secrets
  secret      = google_secret_manager_secret.platform[each.key].id
  secret_data = each.value
  lifecycle {
    # rotation adds versions outside Terraform
    ignore_changes = [secret_data]
  }
}

resource "google_secret_manager_secret_iam_member" "reader" {
  for_each  = local.secret_grants
  secret_id = google_secret_manager_secret.platform[each.value.secret].id
  role      = "roles/secretmanager.secretAccessor"
  member    = "serviceAccount:${local.sa[each.value.reader]}"
}

# portal-api rotates link signing keys (adds versions)
resource "google_secret_manager_secret_iam_member" "portal_signing_key_rotation" {
  secret_id = google_secret_manager_secret.platform["link-signing-keys"].id
  role      = "roles/secretmanager.secretVersionAdder"
  member    = "serviceAccount:${local.sa["portal-api"]}"
}
