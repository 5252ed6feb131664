#!/usr/bin/env bash
# make demo: vmctl end to end on the local cluster. Brings the cluster up and deploys the
# project, applies the examples (a prototype VM, vmctl's Role, a Deployment of 3 vmctl pods,
# a Service selecting the clones), waits until the clones' guests run, curls the Service,
# rolls a prototype change out to the clones, then scales the Deployment 3 -> 1.
# The cluster stays up; `make cluster-down` ends it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export KUBECONFIG=$root/_cluster/kubeconfig
kubectl=$root/_out/tools/bin/kubectl
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { echo "\$ kubectl $*"; "$kubectl" "$@"; }

# Polls until the command's output is exactly want, or fails after timeout seconds.
wait_for() {
  local what=$1 want=$2 timeout=$3; shift 3
  local deadline=$((SECONDS + timeout)) got
  until got=$("$@" 2>/dev/null) && [ "$got" = "$want" ]; do
    if ((SECONDS > deadline)); then
      echo "timed out after ${timeout}s waiting for $what (last: ${got:-nothing})" >&2
      return 1
    fi
    sleep 1
  done
}
count() { "$kubectl" get "$@" -o name | wc -l; }

step "the local cluster, with the project deployed"
make --no-print-directory cluster-up
make --no-print-directory cluster-sync

step "the examples: a prototype VM, vmctl's Role, a vmctl Deployment (3 replicas), a Service"
run apply -f examples/prototype-vm.yaml -f examples/vmctl-rbac.yaml -f examples/vmctl-deployment.yaml -f examples/service.yaml

step "waiting for the clones: vmctl is Ready only once its VM is, so the rollout waits for guests"
start=$SECONDS
run rollout status deployment/vmctl --timeout=10m
echo "3 VMs running $((SECONDS - start))s after the apply"
run get deploy,pods,vm,vmi -o wide

step "the Service answers from the clones' guests (each says its own name)"
ip=$("$kubectl" get service testvm -o jsonpath='{.spec.clusterIP}')
# The Service routes once kube-proxy has seen the launcher pods' endpoints: a few seconds.
wait_for "the Service to answer" 0 60 sh -c "curl -s --max-time 3 -o /dev/null http://$ip/; echo \$?"
echo "\$ curl http://$ip/"
curl -sS --max-time 5 "http://$ip/"
declare -A seen=()
for _ in $(seq 30); do
  answer=$(curl -sS --max-time 3 "http://$ip/" | sed -n 's/.*hostname=\([^<]*\).*/\1/p' || true)
  [ -n "$answer" ] && seen[$answer]=1
  [ "${#seen[@]}" -ge 3 ] && break
done
echo "guests that answered: ${!seen[*]}"

step "a prototype change reaches the clones through a rollout of the Deployment"
gen=$("$kubectl" get vm testvm -o jsonpath='{.metadata.generation}')
run patch vm testvm --type merge -p "{\"spec\":{\"template\":{\"metadata\":{\"labels\":{\"version\":\"v$((gen + 1))\"}}}}}"
gen=$("$kubectl" get vm testvm -o jsonpath='{.metadata.generation}')
run patch deployment vmctl -p "{\"spec\":{\"template\":{\"metadata\":{\"annotations\":{\"vmctl.kubevirt.io/prototype-generation\":\"$gen\"}}}}}"
start=$SECONDS
run rollout status deployment/vmctl --timeout=10m
echo "rolled out one VM at a time in $((SECONDS - start))s"
wait_for "the old clones to go" 3 180 count vm -l vmctl.kubevirt.io/prototype=testvm
run get vmi -L version -L vmctl.kubevirt.io/pod

step "scaling the Deployment 3 -> 1: the clones follow"
run scale deployment/vmctl --replicas=1
wait_for "one clone" 1 180 count vm -l vmctl.kubevirt.io/prototype=testvm
wait_for "one instance" 1 180 count vmi -l vmctl.kubevirt.io/prototype=testvm
run get deploy,pods,vm,vmi -o wide

step "done; the cluster is still up. In your shell:"
cat <<EOT
export KUBECONFIG=$KUBECONFIG
export PATH=$(dirname "$kubectl"):\$PATH
kubectl get vm,vmi                                 # the clone left after 3 -> 1
kubectl delete -f examples/vmctl-deployment.yaml   # its clones go with its pods
make cluster-down
EOT
