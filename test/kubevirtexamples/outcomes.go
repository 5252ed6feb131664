// Package kubevirtexamples is the table of what this platform does with each of KubeVirt's
// examples (test/kubevirt-examples), shared by the admission table test and the e2e test.
package kubevirtexamples

import "path/filepath"

// Types are the examples' instance types and preferences, which the VMs above name: they are
// created first.
var Types = []string{"clarge.yaml", "csmall.yaml", "cluster-csmall.yaml", "virtio.yaml", "windows.yaml"}

// Dir is the examples' folder, given the repository root.
func Dir(root string) string { return filepath.Join(root, "test", "kubevirt-examples") }

// Outcomes is what happens to each of KubeVirt's examples on the local cluster (virt-api with
// --feature-gates=HostDisk,Sidecar,DownwardMetrics, hack/cluster-sync.sh): "" is accepted; otherwise the
// refusal contains the text, which names what is missing (or, for a field KubeVirt no
// longer has, the strict decoding error).
var Outcomes = map[string]string{
	"vm-cirros-clarge-virtio.yaml":               "",
	"vm-cirros-clarge-windows.yaml":              "", // the windows preference's TPM, EFI secure boot, SMM
	"vm-cirros-clarge.yaml":                      "",
	"vm-cirros-cluster-csmall.yaml":              "",
	"vm-cirros-csmall.yaml":                      "",
	"vm-windows-clarge-windows.yaml":             "memory.guest conflicts with selected instance type", // as in KubeVirt: the example sets memory.guest
	"vm-alpine-datavolume.yaml":                  "needs CDI",
	"vm-alpine-multipvc.yaml":                    "",
	"vm-cirros-sata.yaml":                        "",
	"vm-cirros-with-sidecar-hook-configmap.yaml": "", // with the Sidecar feature gate, which the local cluster's virt-api has
	"vm-cirros.yaml":                             "",
	"vm-dra-pgpu.yaml":                           `unknown field "resourceClaimTemplates"`,
	"vm-priorityclass.yaml":                      "",
	"vm-win2k19.yaml":                            "needs CDI",
	"vm_multus_with_nad.yaml":                    "needs Multus",
	"vmi-alpine-efi.yaml":                        "",
	"vmi-arm.yaml":                               "",
	"vmi-block-pvc.yaml":                         "",
	"vmi-dra-pgpu.yaml":                          "device plugin",
	"vmi-ephemeral.yaml":                         "",
	"vmi-fedora-dedicated.yaml":                  "dedicated CPUs",
	"vmi-fedora-isolated.yaml":                   "dedicated CPUs",
	"vmi-fedora.yaml":                            "",
	"vmi-file-memory-backing.yaml":               `unknown field "fileBacked"`,
	"vmi-gpu.yaml":                               "device plugin",
	"vmi-host-disk.yaml":                         "", // with the HostDisk feature gate, which the local cluster's virt-api has
	"vmi-kernel-boot.yaml":                       "",
	"vmi-macvtap.yaml":                           "removed in KubeVirt 1.3",
	"vmi-masquerade.yaml":                        "",
	"vmi-migratable.yaml":                        "",
	"vmi-multus-multiple-net.yaml":               "needs Multus",
	"vmi-multus-ptp.yaml":                        "needs Multus",
	"vmi-nocloud.yaml":                           "",
	"vmi-pvc.yaml":                               "",
	"vmi-replicaset-cirros.yaml":                 "",
	"vmi-sata.yaml":                              "",
	"vmi-secureboot.yaml":                        "",
	"vmi-sidecar-qemu-args.yaml":                 "",
	"vmi-slirp.yaml":                             "removed in KubeVirt 1.3",
	"vmi-ssd-emulation.yaml":                     "",
	"vmi-usb.yaml":                               "device plugin",
	"vmi-vsock.yaml":                             `unknown field "vsock"`,
	"vmi-windows.yaml":                           "",
	"vmi-with-sidecar-hook-configmap.yaml":       "",
	"vmi-with-sidecar-hook.yaml":                 "",
	"vmi-with-sidecar-hostpath.yaml":             `unknown field "hostPath"`,
	"vmi-with-virt-xml-sidecar-hook.yaml":        "",
}
