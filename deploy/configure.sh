#!/usr/bin/env bash
# Writes a site overlay for `kubectl apply -k`: the engine's image and the webhook's TLS Secret.
#
#   deploy/configure.sh IMAGE [--out DIR] [--privileged] [--sys-prefix PREFIX]
#
# DIR (default deploy/site, not committed) gets kustomization.yaml (base/ or privileged/ with
# IMAGE and the Secret runtime-audit-engine-webhook-tls: ca.crt, tls.crt, tls.key, client.crt,
# client.key), tls/ with a CA, a server certificate for the webhook Service's names and
# 127.0.0.1, and the API server's client certificate (CN kube-apiserver, clientAuth), made by
# openssl (ECDSA P-256, ten years, as the engine generates its own: docs/webhook.md): every
# node's engine verifies clients with that one CA (webhook.clientCaFile), so the one client pair
# authenticates the API server and the event generator to all of them. Also
# event-generator/kustomization.yaml, and webhook-config.yaml for
# `rae webhook-config -c DIR/webhook-config.yaml` (the API server's kubeconfig with that pair).
# Existing tls/ files are kept, so running it again (a new image) does not change the CA the
# API server trusts nor its client certificate; a missing client pair is issued with tls/ca.key.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
image="" out=$here/site variant=base prefix=d8
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=${2:?}; shift ;;
    --privileged) variant=privileged ;;
    --sys-prefix) prefix=${2:?}; shift ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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
out=$(cd "$out" && pwd) # absolute: webhook-config.yaml names its files
tls=$out/tls
# issue NAME SUBJECT EXTENSIONS: NAME.key and NAME.crt in tls/, signed by tls/ca.key for ten years.
issue() {
  openssl ecparam -name prime256v1 -genkey -noout | openssl pkcs8 -topk8 -nocrypt -out "$tls/$1.key"
  openssl req -new -key "$tls/$1.key" -subj "$2" -out "$tls/$1.csr"
  printf '%s\n' "$3" >"$tls/$1.ext"
  openssl x509 -req -in "$tls/$1.csr" -CA "$tls/ca.crt" -CAkey "$tls/ca.key" -CAcreateserial -sha256 -days 3650 -extfile "$tls/$1.ext" -out "$tls/$1.crt" 2>/dev/null
  rm -f "$tls/$1.csr" "$tls/$1.ext" "$tls/ca.srl"
  chmod 644 "$tls/$1.crt"
}
user_umask=$(umask)
umask 077
if [ ! -f "$tls/ca.crt" ] || [ ! -f "$tls/tls.crt" ] || [ ! -f "$tls/tls.key" ]; then
  openssl ecparam -name prime256v1 -genkey -noout -out "$tls/ca.key"
  openssl req -x509 -new -key "$tls/ca.key" -sha256 -days 3650 -subj "/O=runtime-audit-engine/CN=runtime-audit-engine webhook CA" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign -out "$tls/ca.crt"
  chmod 644 "$tls/ca.crt"
  rm -f "$tls/client.crt" "$tls/client.key" # issued by the old CA
  issue tls "/CN=$svc.$ns.svc" "basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth
subjectAltName=DNS:$svc,DNS:$svc.$ns,DNS:$svc.$ns.svc,DNS:$svc.$ns.svc.cluster.local,IP:127.0.0.1"
  echo "configure: made the webhook CA and certificate in $tls (keep ca.key private, or delete it once the client certificate is made)" >&2
fi
if [ ! -f "$tls/client.crt" ] || [ ! -f "$tls/client.key" ]; then
  [ -f "$tls/ca.key" ] || { echo "configure: $tls has no client.crt and client.key, and no ca.key to issue them: remove $tls to make new material (then give every API server the new kubeconfig)" >&2; exit 1; }
  issue client "/O=runtime-audit-engine/CN=kube-apiserver" "basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=clientAuth"
  echo "configure: made the API server's client certificate $tls/client.crt (rae webhook-config -c $out/webhook-config.yaml puts it in its kubeconfig)" >&2
fi
umask "$user_umask"
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
      - client.crt=tls/client.crt
      - client.key=tls/client.key
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
cat >"$out/webhook-config.yaml" <<YAML
# Written by deploy/configure.sh: rae webhook-config -c $out/webhook-config.yaml prints the API
# server's audit webhook kubeconfig (the webhook Service, the CA, the client certificate of tls/).
stateDir: $out/webhook-config-state
webhook:
  address: $svc.$ns.svc
  tlsCertFile: $tls/tls.crt
  tlsKeyFile: $tls/tls.key
  tlsCaFile: $tls/ca.crt
  clientCaFile: $tls/ca.crt
  clientCertFile: $tls/client.crt
  clientKeyFile: $tls/client.key
YAML
echo "configure: wrote $out/kustomization.yaml ($variant, image $image); next: kubectl apply -k $out" >&2
