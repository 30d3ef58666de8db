# Cloud Armor in front of both backend services: a per-client-address throttle that bounds what
# one address can make the services do. The services' own limits (contract section 8: 120
# requests per 60 s per API key, source or location; link minting 120 per minute per customer)
# count only requests that authenticate (contract 7.4), so a flood of bad credentials or unknown
# hosts reaches Cloud Run unbounded without this.
#
# Sizing (docs/capacity.md, "Cloud Armor"): the threshold is per address and per backend
# service (Cloud Armor counts each backend service the policy is attached to separately), and a
# tenant at the contract's limits must never meet it, since Cloud Armor's 429 carries neither
# Retry-After nor the error envelope. One credential at its limit makes 120 requests a minute
# (pushes of up to 10,000 records each, or 120 link mints); the default 6,000 a minute is 50
# credentials at their limit behind one address (an integrator or a NAT serving many tenants),
# with pushes batched as the contract requires past 2 requests a second per credential.
# Inbound webhooks (/v1/contacts/<source>, /v1/contacts/partnercrm and the portal's deprecated
# /api/contacts/webhook/<source>) get their own, much higher throttle: a sending platform
# delivers for all its customers' sources and locations from a few shared addresses, and the
# origin fallback has no rate limit by contract (4.6 rule 4), but a made-up source id still
# costs a lookup, so one address must not send them without any bound.

resource "google_compute_security_policy" "per_ip" {
  count       = var.cloud_armor ? 1 : 0
  name        = "lsv-per-ip-throttle"
  description = "Per-client-address throttle in front of edge-ingest and portal-api (infra/cloud-armor.tf)."
  type        = "CLOUD_ARMOR"

  rule {
    action      = "throttle"
    priority    = 1000
    description = "inbound webhooks: shared sender addresses, a higher bound"
    match {
      expr {
        expression = "request.path.startsWith('/v1/contacts/') || request.path.startsWith('/api/contacts/webhook/')"
      }
    }
    rate_limit_options {
      conform_action = "allow"
      exceed_action  = "deny(429)"
      enforce_on_key = "IP"
      rate_limit_threshold {
        count        = var.cloud_armor_webhook_requests_per_ip_per_minute
        interval_sec = 60
      }
    }
  }

  rule {
    action      = "throttle"
    priority    = 2000
    description = "per client address: 50 credentials at contract limit fit"
    match {
      versioned_expr = "SRC_IPS_V1"
      config {
        src_ip_ranges = ["*"]
      }
    }
    rate_limit_options {
      conform_action = "allow"
      exceed_action  = "deny(429)"
      # IP: the address that connected to the load balancer (X-Forwarded-For is the caller's to
      # write, so it is never the key)
      enforce_on_key = "IP"
      rate_limit_threshold {
        count        = var.cloud_armor_requests_per_ip_per_minute
        interval_sec = 60
      }
    }
  }

  # the default rule every policy must have (priority 2147483647, matching everything)
  rule {
    action      = "allow"
    priority    = 2147483647
    description = "default rule"
    match {
      versioned_expr = "SRC_IPS_V1"
      config {
        src_ip_ranges = ["*"]
      }
    }
  }

  depends_on = [google_project_service.enabled]
}
