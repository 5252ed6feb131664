# shellcheck shell=bash
# Certificates and kubeconfigs of the local cluster, made once with openssl and kept across
# down/up (PURGE=1 removes them). Sourced by up.sh after lib.sh.
# ECDSA P-256 keys throughout: generating them is instant, unlike RSA.

# key FILE: a new private key.
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

# ca NAME CN: a self-signed certificate authority NAME.crt / NAME.key.
ca() {
  key "$PKI/$1.key"
  openssl req -x509 -new -key "$PKI/$1.key" -subj "/CN=$2" -days 3650 -out "$PKI/$1.crt" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
}

# cert NAME CA SUBJECT USAGE [SANS]: NAME.crt / NAME.key signed by CA. USAGE is serverAuth or
# clientAuth. Kubernetes takes a client's user from CN and its groups from O.
cert() {
  local name=$1 ca=$2 subject=$3 usage=$4 sans=${5:-}
  key "$PKI/$name.key"
  openssl req -new -key "$PKI/$name.key" -subj "$subject" |
    openssl x509 -req -CA "$PKI/$ca.crt" -CAkey "$PKI/$ca.key" -CAcreateserial -CAserial "$PKI/$ca.srl" \
      -days 3650 -out "$PKI/$name.crt" 2>/dev/null -extfile <(
        echo "keyUsage=critical,digitalSignature,keyEncipherment"
        echo "extendedKeyUsage=$usage"
        [ -z "$sans" ] || echo "subjectAltName=$sans"
      )
}

# kubeconfig FILE CERT: a kubeconfig that talks to the local API server as CERT's user.
kubeconfig() {
  local b64='base64 -w0'
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: vmctl
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority-data: $($b64 <"$PKI/ca.crt")
users:
- name: $2
  user:
    client-certificate-data: $($b64 <"$PKI/$2.crt")
    client-key-data: $($b64 <"$PKI/$2.key")
contexts:
- name: vmctl
  context: {cluster: vmctl, user: $2}
current-context: vmctl
EOF
}

make_pki() {
  [ -f "$PKI/complete" ] && [ -f "$KUBECONFIG_ADMIN" ] && return 0
  log "generating certificates in $PKI"
  rm -rf "$PKI" && mkdir -p "$PKI" && chmod 700 "$PKI"
  ca ca vmctl-ca
  cert kube-apiserver ca /CN=kube-apiserver serverAuth \
    "IP:127.0.0.1,IP:$SERVICE_IP,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  cert admin ca /O=system:masters/CN=kubernetes-admin clientAuth
  cert kube-controller-manager ca /CN=system:kube-controller-manager clientAuth
  cert kube-scheduler ca /CN=system:kube-scheduler clientAuth
  cert kube-proxy ca /CN=system:kube-proxy clientAuth
  cert kubelet ca "/O=system:nodes/CN=system:node:$NODE_NAME" clientAuth
  # kwok acts for its fake nodes and manages their pods: it gets cluster-admin.
  cert kwok ca /O=system:masters/CN=kwok clientAuth
  # The API server's identity towards kubelets (logs, exec, port-forward).
  cert apiserver-kubelet-client ca /O=system:masters/CN=kube-apiserver-kubelet-client clientAuth
  # The aggregation layer: the API server proxies to aggregated API servers as this client,
  # and they trust the user headers it sets only from certificates of this separate CA.
  ca front-proxy-ca vmctl-front-proxy-ca
  cert front-proxy-client front-proxy-ca /CN=front-proxy-client clientAuth
  # Service-account tokens are signed with this key pair.
  key "$PKI/sa.key"
  openssl pkey -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub"
  for c in kube-controller-manager kube-scheduler kube-proxy kubelet kwok; do kubeconfig "$PKI/$c.kubeconfig" "$c"; done
  kubeconfig "$KUBECONFIG_ADMIN.tmp" admin && mv "$KUBECONFIG_ADMIN.tmp" "$KUBECONFIG_ADMIN"
  touch "$PKI/complete"
}
