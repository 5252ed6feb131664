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

# kubeconfig FILE CERT [SERVER]: a kubeconfig that talks to the local API server (at
# 127.0.0.1 unless SERVER says otherwise) as CERT's user.
kubeconfig() {
  local b64='base64 -w0'
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: vmctl
  cluster:
    server: ${3:-https://127.0.0.1:6443}
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

# apiserver_cert IP: the API server's serving certificate, for clients on the host, in pods
# (the "kubernetes" Service) and on the nodes after the first, which reach the API server at the
# host's address IP. Issued again when IP is new to it (PKI made before, or another address).
apiserver_cert() {
  local ip=$1
  openssl x509 -in "$PKI/kube-apiserver.crt" -noout -ext subjectAltName 2>/dev/null |
    grep -qE "IP Address:${ip//./\\.}(,|$)" && return 0
  log "issuing the API server's certificate (host address $ip)"
  cert kube-apiserver ca /CN=kube-apiserver serverAuth \
    "IP:127.0.0.1,IP:$SERVICE_IP,IP:$ip,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
}

# node_pki NODE IP: the certificate and kubeconfigs of a node after the first: its kubelet acts
# as system:node:NODE; its kube-proxy shares the first node's identity. Both reach the API
# server at the host's address IP (127.0.0.1 would be the node's own loopback).
node_pki() {
  local node=$1 ip=$2 kubelet
  kubelet=$(comp kubelet "$node")
  [ -f "$PKI/$kubelet.crt" ] || cert "$kubelet" ca "/O=system:nodes/CN=system:node:$node" clientAuth
  kubeconfig "$PKI/$kubelet.kubeconfig" "$kubelet" "https://$ip:6443"
  kubeconfig "$PKI/$(comp kube-proxy "$node").kubeconfig" kube-proxy "https://$ip:6443"
}

# make_pki IP: every certificate the cluster needs, made once.
make_pki() {
  local ip=$1
  if [ -f "$PKI/complete" ] && [ -f "$KUBECONFIG_ADMIN" ]; then apiserver_cert "$ip"; return; fi
  log "generating certificates in $PKI"
  rm -rf "$PKI" && mkdir -p "$PKI" && chmod 700 "$PKI"
  ca ca vmctl-ca
  apiserver_cert "$ip"
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
