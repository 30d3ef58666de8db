#!/usr/bin/env bash
# Builds and pushes the four images with skaffold (skaffold.yaml), then points each Cloud Run
# service Terraform manages at its new image. Only the image changes: the environment, secrets,
# probes, scaling and identity stay what Terraform set (infra/cloud-run.tf ignores the image).
#
#   deploy/roll-out.sh PROJECT REGION [skaffold build flags...]
#
# Images go to REGION-docker.pkg.dev/PROJECT/$REPOSITORY (default lsv, Terraform's
# var.artifact_repository). Needs skaffold, docker and gcloud (authenticated, with run.developer
# on the services and actAs on their accounts, as the cloud-build account has).
set -euo pipefail

usage="usage: deploy/roll-out.sh PROJECT REGION [skaffold build flags...]"
project="${1:?$usage}"
region="${2:?$usage}"
shift 2
repository="${REPOSITORY:-lsv}"
cd "$(dirname "$0")/.."

# "<image name> <pushed reference>" per line; the reference carries the digest skaffold pushed
built="$(skaffold build --default-repo="${region}-docker.pkg.dev/${project}/${repository}" \
  --quiet --output='{{range .Builds}}{{.ImageName}} {{.Tag}}{{"\n"}}{{end}}' "$@")"

services=()
images=()
while read -r service image; do
  [ -n "${service:-}" ] || continue
  case "$service" in
    edge-ingest | portal-api | upsert-worker | webhook-dispatcher) ;;
    *) echo "roll-out: skaffold built an image this script does not know: $service" >&2; exit 1 ;;
  esac
  services+=("$service")
  images+=("$image")
done <<< "$built"
# all four or none: a half-rolled platform would run two versions side by side
if [ "${#services[@]}" -ne 4 ]; then
  echo "roll-out: expected 4 images from skaffold, got ${#services[@]}" >&2
  exit 1
fi

for i in "${!services[@]}"; do
  gcloud run services update "${services[$i]}" --image="${images[$i]}" --region="$region" --project="$project" --quiet
done
