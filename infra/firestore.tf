resource "google_firestore_database" "main" {
  name                    = "(default)"
  location_id             = var.firestore_location
  type                    = "FIRESTORE_NATIVE"
  concurrency_mode        = "OPTIMISTIC"
  delete_protection_state = "DELETE_PROTECTION_ENABLED"
  depends_on              = [google_project_service.enabled]
}

# Composite indexes: one per composite query the code runs (shared/src/adapters/google/firestore-indexes.ts;
# test/infra asserts they match).
resource "google_firestore_index" "deliveries_by_integration" {
  database    = google_firestore_database.main.name
  collection  = "deliveries"
  query_scope = "COLLECTION"
  fields {
    field_path = "integration_id"
    order      = "ASCENDING"
  }
  fields {
    field_path = "created_at"
    order      = "DESCENDING"
  }
  fields {
    field_path = "__name__"
    order      = "DESCENDING"
  }
}

# the delivery log narrowed to one status (the portal's status filter, recover's failed
# deliveries) and its count() per status
resource "google_firestore_index" "deliveries_by_integration_status" {
  database    = google_firestore_database.main.name
  collection  = "deliveries"
  query_scope = "COLLECTION"
  fields {
    field_path = "integration_id"
    order      = "ASCENDING"
  }
  fields {
    field_path = "status"
    order      = "ASCENDING"
  }
  fields {
    field_path = "created_at"
    order      = "DESCENDING"
  }
  fields {
    field_path = "__name__"
    order      = "DESCENDING"
  }
}

# TTL policies: expiring data is deleted by Firestore (within ~24 h of expire_at).
resource "google_firestore_field" "ttl" {
  for_each   = toset(["rate_limits", "claims", "deliveries", "portal_links", "portal_sessions", "portal_reveals", "pushes", "refused_pushes", "push_outcomes"])
  database   = google_firestore_database.main.name
  collection = each.value
  field      = "expire_at"
  ttl_config {}
  # TTL fields need no single-field index
  index_config {}
}
