# The edge host `<customer_public_id>.<edge_domain>` and the portal domain behind one global
# external HTTPS load balancer with serverless NEGs. Cloud Run domain mappings cannot serve
# wildcards, so a Certificate Manager wildcard certificate (DNS authorization) covers
# *.<edge_domain>; the portal has its own managed certificate.

resource "google_compute_global_address" "lb" {
  name       = "lsv-lb"
  depends_on = [google_project_service.enabled]
}

resource "google_compute_region_network_endpoint_group" "neg" {
  for_each              = toset(["edge-ingest", "portal-api"])
  name                  = "${each.value}-neg"
  region                = var.region
  network_endpoint_type = "SERVERLESS"
  cloud_run {
    service = google_cloud_run_v2_service.service[each.value].name
  }
}

resource "google_compute_backend_service" "backend" {
  for_each              = toset(["edge-ingest", "portal-api"])
  name                  = "${each.value}-backend"
  load_balancing_scheme = "EXTERNAL_MANAGED"
  protocol              = "HTTPS"
  backend {
    group = google_compute_region_network_endpoint_group.neg[each.value].id
  }
  log_config {
    enable      = true
    sample_rate = 0.1
  }
  # Cloud Armor's per-address throttle (cloud-armor.tf); null when var.cloud_armor is off
  security_policy = var.cloud_armor ? google_compute_security_policy.per_ip[0].self_link : null
}

resource "google_compute_url_map" "https" {
  name            = "lsv-https"
  default_service = google_compute_backend_service.backend["edge-ingest"].id
  host_rule {
    hosts        = ["*.${var.edge_domain}"]
    path_matcher = "edge"
  }
  host_rule {
    hosts        = [var.portal_domain]
    path_matcher = "portal"
  }
  path_matcher {
    name            = "edge"
    default_service = google_compute_backend_service.backend["edge-ingest"].id
  }
  path_matcher {
    name            = "portal"
    default_service = google_compute_backend_service.backend["portal-api"].id
  }
}

resource "google_certificate_manager_dns_authorization" "edge" {
  name       = "edge-domain"
  domain     = var.edge_domain
  depends_on = [google_project_service.enabled]
}

resource "google_certificate_manager_dns_authorization" "portal" {
  name       = "portal-domain"
  domain     = var.portal_domain
  depends_on = [google_project_service.enabled]
}

resource "google_certificate_manager_certificate" "edge_wildcard" {
  name = "edge-wildcard"
  managed {
    domains            = ["*.${var.edge_domain}"]
    dns_authorizations = [google_certificate_manager_dns_authorization.edge.id]
  }
}

resource "google_certificate_manager_certificate" "portal" {
  name = "portal"
  managed {
    domains            = [var.portal_domain]
    dns_authorizations = [google_certificate_manager_dns_authorization.portal.id]
  }
}

resource "google_certificate_manager_certificate_map" "lb" {
  name       = "lsv-certificates"
  depends_on = [google_project_service.enabled]
}

resource "google_certificate_manager_certificate_map_entry" "edge" {
  name         = "edge-wildcard"
  map          = google_certificate_manager_certificate_map.lb.name
  hostname     = "*.${var.edge_domain}"
  certificates = [google_certificate_manager_certificate.edge_wildcard.id]
}

resource "google_certificate_manager_certificate_map_entry" "portal" {
  name         = "portal"
  map          = google_certificate_manager_certificate_map.lb.name
  hostname     = var.portal_domain
  certificates = [google_certificate_manager_certificate.portal.id]
}

resource "google_compute_target_https_proxy" "https" {
  name            = "lsv-https"
  url_map         = google_compute_url_map.https.id
  certificate_map = "//certificatemanager.googleapis.com/${google_certificate_manager_certificate_map.lb.id}"
}

resource "google_compute_global_forwarding_rule" "https" {
  name                  = "lsv-https"
  ip_address            = google_compute_global_address.lb.id
  port_range            = "443"
  target                = google_compute_target_https_proxy.https.id
  load_balancing_scheme = "EXTERNAL_MANAGED"
}

# Plain HTTP only redirects to HTTPS.
resource "google_compute_url_map" "http_redirect" {
  name = "lsv-http-redirect"
  default_url_redirect {
    https_redirect         = true
    strip_query            = false
    redirect_response_code = "MOVED_PERMANENTLY_DEFAULT"
  }
  depends_on = [google_project_service.enabled]
}

resource "google_compute_target_http_proxy" "http" {
  name    = "lsv-http"
  url_map = google_compute_url_map.http_redirect.id
}

resource "google_compute_global_forwarding_rule" "http" {
  name                  = "lsv-http"
  ip_address            = google_compute_global_address.lb.id
  port_range            = "80"
  target                = google_compute_target_http_proxy.http.id
  load_balancing_scheme = "EXTERNAL_MANAGED"
}
