#!/usr/bin/env bash
# make bench: the project's performance next to its floors, on the local cluster.
#   (a) BENCH_VMS VMs created BENCH_INTERVAL apart on the real node, next to as many launcher
#       pods booting the same guest with QEMU started by the pod itself (the floor); (b) a vmctl
#       Deployment of BENCH_VMCTL replicas (default BENCH_VMS), next to a Deployment of those pods
#       (test/bench/guests);
#   (c) BENCH_DISK_RUNS boots of a 24 MiB and a 2 GiB containerDisk (test/bench/disks);
#   (d) BENCH_KWOK_VMS VMs on BENCH_KWOK_NODES kwok nodes next to a Deployment as large
#       (test/bench/controller);
#   (e) BENCH_FORWARD_REQUESTS requests to a guest through a vmctl pod's --forward, next to the
#       same requests sent to the guest directly (test/bench/vmctl);
#   (f) BENCH_MIGRATIONS live migrations of the test guest between the two real nodes, next to
#       libvirt's own migration time and downtime (test/bench/migration).
# The cluster has two real nodes; the second is cordoned for (a) to (e), which measure one node.
# The cluster runs with the API server's audit log (AUDIT=1), which counts every component's
# writes. Results: _out/bench/bench.md and bench.json. BENCH_VMS=0, BENCH_VMCTL=0, BENCH_DISK_RUNS=0,
# BENCH_KWOK_VMS=0, BENCH_FORWARD_REQUESTS=0 or BENCH_MIGRATIONS=0 skips a part; BENCH_DOWN=1 takes
# the cluster down after.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export KUBECONFIG=$root/_cluster/kubeconfig
out=_out/bench
vms=${BENCH_VMS:-100}
vmctl=${BENCH_VMCTL:-$vms}

if hack/cluster/running.sh; then
  # A cluster that is up without the audit log cannot count writes, and restarting it would
  # wipe the user's objects.
  if ! grep -qa -- --audit-log-path "/proc/$(cat _cluster/pids/kube-apiserver.pid 2>/dev/null)/cmdline" 2>/dev/null; then
    echo "make bench: the local cluster is up without the audit log that counts API writes;" >&2
    echo "run make cluster-down first (make bench brings it up with AUDIT=1)" >&2
    exit 1
  fi
  echo ">> the local cluster is already up: benchmarking on it and leaving it up"
elif [ "${BENCH_DOWN:-0}" = 1 ]; then
  trap 'make --no-print-directory cluster-down' EXIT
fi
AUDIT=1 make --no-print-directory cluster-up REAL_NODES=2
make --no-print-directory cluster-sync
mkdir -p "$out"
# The parts before the migrations measure one node: the others take no new pods meanwhile.
mapfile -t others < <(kubectl get nodes -l 'type!=kwok' -o name | sort | tail -n +2)
[ ${#others[@]} -eq 0 ] || kubectl cordon "${others[@]}"
parts=()
if [ "$vms" -gt 0 ] || [ "$vmctl" -gt 0 ]; then
  go run ./test/bench/guests --vms "$vms" --interval "${BENCH_INTERVAL:-100ms}" \
    --vmctl-replicas "$vmctl" --guest-memory "${BENCH_GUEST_MEMORY:-80Mi}" --out "$out"
  parts+=(guests)
fi
disk_runs=${BENCH_DISK_RUNS:-3}
if [ "$disk_runs" -gt 0 ]; then
  go run ./test/bench/disks --runs "$disk_runs" --out "$out"
  parts+=(disks)
fi
forward_requests=${BENCH_FORWARD_REQUESTS:-200}
if [ "$forward_requests" -gt 0 ]; then
  go run ./test/bench/vmctl --runs 0 --forward-requests "$forward_requests" --out "$out"
  parts+=(forward)
fi
[ ${#others[@]} -eq 0 ] || kubectl uncordon "${others[@]}"
migrations=${BENCH_MIGRATIONS:-5}
if [ "$migrations" -gt 0 ] && [ ${#others[@]} -eq 0 ]; then
  echo ">> skipping the migrations: the cluster that was up has one real node (make cluster-down first)"
elif [ "$migrations" -gt 0 ]; then
  go run ./test/bench/migration --runs "$migrations" --out "$out"
  parts+=(migration)
fi
kwok_vms=${BENCH_KWOK_VMS:-1000}
if [ "$kwok_vms" -gt 0 ]; then
  hack/cluster/kwok.sh "${BENCH_KWOK_NODES:-1000}"
  go run ./test/bench/controller --count "$kwok_vms" --out "$out"
  parts+=(controller)
fi

# The parts this run measured, as one table and one JSON object.
{
  for part in "${parts[@]}"; do cat "$out/$part.md"; echo; done
  echo "machine: $(nproc) cores, $(free -g | awk '/^Mem:/{print $2}') GiB, $(uname -r)"
} >"$out/bench.md"
{
  sep='{'
  for part in "${parts[@]}"; do printf '%s"%s": %s' "$sep" "$part" "$(cat "$out/$part.json")"; sep=', '; done
  echo '}'
} >"$out/bench.json"
cat "$out/bench.md"
