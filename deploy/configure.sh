#!/usr/bin/env bash
# Writes a site overlay for `kubectl apply -k`: the engine's image and the webhook's TLS Secret.
#
#   deploy/configure.sh IMAGE [--out DIR] [--privileged] [--sys-prefix PREFIX]
#
# DIR (default deploy/site, not committed) gets kustomization.yaml (base/ or privileged/ with
# IMAGE and the Secret runtime-audit-engine-webhook-tls: ca.crt, tls.crt, tls.key), tls/ with a
# CA and a server certificate made by openssl (ECDSA P-256, ten years, as the engine generates
# its own: docs/webhook.md) for the webhook Service's names and 127.0.0.1, and
# event-generator/kustomization.yaml. Existing tls/ files are kept, so running it again (a new
# image) does not change the CA the API server trusts.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
image="" out=$here/site variant=base prefix=d8
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=${2:?}; shift ;;
    --privileged) variant=privileged ;;
    --sys-prefix) prefix=${2:?}; shift ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "configure: unknown option $1" >&2; exit 2 ;;
    *) image=$1 ;;
  esac
  shift
done
[ -n "$image" ] || { echo "usage: deploy/configure.sh IMAGE [--out DIR] [--privileged] [--sys-prefix PREFIX]" >&2; exit 2; }
# name[:tag] or name@digest; a ':' before the last '/' is a registry port.
case "$image" in
  *@*) name=${image%@*}; ref="    digest: ${image#*@}" ;;
  *) last=${image##*/}
     if [ "${last#*:}" != "$last" ]; then name=${image%:*}; ref="    newTag: \"${last##*:}\""; else name=$image; ref="    newTag: latest"; fi ;;
esac
ns=$prefix-runtime-audit-engine
svc=runtime-audit-engine-webhook
mkdir -p "$out/tls" "$out/event-generator"
tls=$out/tls
if [ ! -f "$tls/ca.crt" ] || [ ! -f "$tls/tls.crt" ] || [ ! -f "$tls/tls.key" ]; then
  umask 077
  openssl ecparam -name prime256v1 -genkey -noout -out "$tls/ca.key"
  openssl req -x509 -new -key "$tls/ca.key" -sha256 -days 3650 -subj "/O=runtime-audit-engine/CN=runtime-audit-engine webhook CA" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign -out "$tls/ca.crt"
  openssl ecparam -name prime256v1 -genkey -noout | openssl pkcs8 -topk8 -nocrypt -out "$tls/tls.key"
  openssl req -new -key "$tls/tls.key" -subj "/CN=$svc.$ns.svc" -out "$tls/tls.csr"
  printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:%s,DNS:%s.%s,DNS:%s.%s.svc,DNS:%s.%s.svc.cluster.local,IP:127.0.0.1\n' \
    "$svc" "$svc" "$ns" "$svc" "$ns" "$svc" "$ns" >"$tls/ext.cnf"
  openssl x509 -req -in "$tls/tls.csr" -CA "$tls/ca.crt" -CAkey "$tls/ca.key" -CAcreateserial -sha256 -days 3650 -extfile "$tls/ext.cnf" -out "$tls/tls.crt" 2>/dev/null
  rm -f "$tls/tls.csr" "$tls/ext.cnf" "$tls/ca.srl"
  chmod 644 "$tls/ca.crt" "$tls/tls.crt"
  echo "configure: made the webhook CA and certificate in $tls (keep ca.key private, or delete it)" >&2
fi
rel=$(realpath --relative-to="$out" "$here")
# base/ and event-generator/ name localhost/runtime-audit-engine:<version> (scripts/build-image.sh's tag).
images="images:
  - name: localhost/runtime-audit-engine
    newName: $name
$ref"
cat >"$out/kustomization.yaml" <<YAML
# Written by deploy/configure.sh: kubectl apply -k $out
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: $ns
resources:
  - $rel/$variant
secretGenerator:
  - name: runtime-audit-engine-webhook-tls
    type: kubernetes.io/tls
    files:
      - ca.crt=tls/ca.crt
      - tls.crt=tls/tls.crt
      - tls.key=tls/tls.key
    options:
      disableNameSuffixHash: true
      labels:
        app: runtime-audit-engine
        module: runtime-audit-engine
$images
YAML
cat >"$out/event-generator/kustomization.yaml" <<YAML
# Written by deploy/configure.sh: kubectl apply -k $out/event-generator
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: $ns
resources:
  - ../$rel/event-generator
$images
YAML
echo "configure: wrote $out/kustomization.yaml ($variant, image $image); next: kubectl apply -k $out" >&2
