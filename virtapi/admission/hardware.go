package admission

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/pkg/instancetype"
)

// MinGuestMemory is the least memory a guest may have. Below it no guest this platform runs
// boots: a 64-bit Linux kernel needs tens of MiB to decompress itself and unpack its
// initramfs, and QEMU refuses to start at all when kernel and initrd do not fit ("initrd is
// too large", which is what 1Mi gave, at the node). It stays well under the smallest guest
// in the tree, KubeVirt's cirros at 64M (61Mi), so every example applies; the project's test
// guest needs 80Mi to boot reliably. KubeVirt's floor is 1M, which admits guests that never
// boot. docs/admission.md lists every such limit.
var MinGuestMemory = resource.MustParse("32Mi")

// Limits are the bounds an operator tunes with virt-api's flags; they are passed in, never
// global, so the rules stay pure functions of their input.
type Limits struct {
	// MaxEmptyDiskCapacity bounds spec.volumes[].emptyDisk.capacity; zero means no bound. An
	// emptyDisk is a sparse file in the launcher pod's emptyDir, on the node's own disk,
	// which the guest may fill to its capacity; and the node cannot create one larger than
	// its file system allows (ext4: 16Ti), so 64Ti failed at the node.
	MaxEmptyDiskCapacity resource.Quantity
	// Instancetypes reads the instance types, preferences and ControllerRevisions VMs name
	// (virt-api: from the API server). Nil refuses every VM that names one: it cannot be
	// checked.
	Instancetypes instancetype.Getter
	// HostDisk admits hostDisk volumes: KubeVirt's HostDisk feature gate (hostdisk.go).
	HostDisk bool
	// Sidecar admits hook sidecars: KubeVirt's Sidecar feature gate (sidecars.go).
	Sidecar bool
	// DownwardMetrics admits downward metrics: KubeVirt's DownwardMetrics feature gate
	// (downwardmetrics.go).
	DownwardMetrics bool
}

// DefaultLimits are virt-api's defaults (--max-empty-disk-capacity=100Gi).
func DefaultLimits() Limits {
	return Limits{MaxEmptyDiskCapacity: resource.MustParse("100Gi")}
}

// memoryTooSmall: the guest gets at least MinGuestMemory and no more than the limit. Only
// the quantity that sizes the guest is held to the floor: memory.guest, else the request,
// else the limit (the order SetDefaults_VirtualMachineInstanceSpec uses); with memory.guest
// set, requests and limits size only the pod. A memory.guest equal to the request or limit
// is taken as that field's default, so the error names what the user wrote.
func memoryTooSmall(path *field.Path, d *v1.DomainSpec) field.ErrorList {
	var errs field.ErrorList
	request, hasRequest := d.Resources.Requests["memory"]
	limit, hasLimit := d.Resources.Limits["memory"]
	var p *field.Path
	var q resource.Quantity
	switch guest := d.Memory; {
	case hasRequest && (guest == nil || guest.Guest == nil || guest.Guest.Cmp(request) == 0):
		p, q = path.Child("resources", "requests", "memory"), request
	case !hasRequest && hasLimit && (guest == nil || guest.Guest == nil || guest.Guest.Cmp(limit) == 0):
		p, q = path.Child("resources", "limits", "memory"), limit
	case guest != nil && guest.Guest != nil:
		p, q = path.Child("memory", "guest"), *guest.Guest
	}
	// Zero and negative quantities are refused by the shared validation ("greater than zero").
	if p != nil && q.Sign() > 0 && q.Cmp(MinGuestMemory) < 0 {
		errs = append(errs, field.Invalid(p, q.String(), fmt.Sprintf("too small for a guest to boot: at least %s", MinGuestMemory.String())))
	}
	if d.Memory != nil && d.Memory.Guest != nil && hasLimit && d.Memory.Guest.Cmp(limit) > 0 {
		errs = append(errs, field.Invalid(path.Child("memory", "guest"), d.Memory.Guest.String(),
			fmt.Sprintf("must not be greater than %s (%s)", path.Child("resources", "limits", "memory"), limit.String())))
	}
	return errs
}

// apicIDLimit: QEMU starts a guest whose APIC IDs reach 255 only with an IOMMU doing
// interrupt remapping (and x2APIC), which the node never configures; QEMU 7.2 (Debian
// bookworm's) then exits with "current -smp configuration requires Extended Interrupt Mode".
const apicIDLimit = 255

// machineMaxVCPUs is QEMU 7.2's max_cpus per machine family, by the prefixes of its names.
var machineMaxVCPUs = []struct {
	prefix, name string
	max          uint64
}{
	{"pc-q35-", "q35", 288}, {"q35", "q35", 288},
	{"pc-i440fx-", "pc-i440fx", 255}, {"pc", "pc-i440fx", 255},
}

// cpuTopology: the vCPUs (sockets × cores × threads, 0 meaning 1 as at the node and in
// KubeVirt) must fit the machine type, and their APIC IDs below apicIDLimit. The error names
// the largest of the three, the one to lower.
func cpuTopology(path *field.Path, d *v1.DomainSpec) field.ErrorList {
	if d.CPU == nil {
		return nil
	}
	dims := []struct {
		name string
		n    uint64
	}{{"cores", uint64(d.CPU.Cores)}, {"sockets", uint64(d.CPU.Sockets)}, {"threads", uint64(d.CPU.Threads)}}
	worst := 0
	for i := range dims {
		dims[i].n = max(dims[i].n, 1)
		if dims[i].n > dims[worst].n {
			worst = i
		}
	}
	cores, sockets, threads := dims[0].n, dims[1].n, dims[2].n
	// Three uint32s may overflow a uint64: saturate, and print the exact product.
	hi, total := bits.Mul64(cores*sockets, threads)
	if hi != 0 {
		total = math.MaxUint64
	}
	product := new(big.Int).Mul(new(big.Int).SetUint64(cores*sockets), new(big.Int).SetUint64(threads))
	machine := v1.DefaultMachineType
	if d.Machine != nil && d.Machine.Type != "" {
		machine = d.Machine.Type
	}
	invalid := func(why string) field.ErrorList {
		return field.ErrorList{field.Invalid(path.Child("cpu", dims[worst].name), dims[worst].n,
			fmt.Sprintf("sockets × cores × threads = %s vCPUs, %s", product, why))}
	}
	for _, m := range machineMaxVCPUs {
		if strings.HasPrefix(machine, m.prefix) {
			if total > m.max {
				return invalid(fmt.Sprintf("more than the %d QEMU's %s machine accepts", m.max, m.name))
			}
			break
		}
	}
	if total > apicIDLimit {
		return invalid(fmt.Sprintf("more than the %d QEMU accepts without an IOMMU doing interrupt remapping, which the node does not give guests", apicIDLimit))
	}
	// QEMU numbers a vCPU's APIC ID socket|core|thread, each field as many bits as its count
	// needs, so 255 vCPUs or fewer may still reach ID 255 (85 sockets of 3 cores: up to 338).
	coreBits, threadBits := bits.Len64(cores-1), bits.Len64(threads-1)
	if highest := (sockets-1)<<(coreBits+threadBits) | (cores-1)<<threadBits | (threads - 1); highest >= apicIDLimit {
		return invalid(fmt.Sprintf("whose APIC IDs reach %d: QEMU needs an IOMMU doing interrupt remapping for IDs of %d and above, which the node does not give guests; use powers of two for cores and threads", highest, apicIDLimit))
	}
	return nil
}

// emptyDisks: an emptyDisk is at least one byte (the node refuses an empty image) and at
// most limits.MaxEmptyDiskCapacity.
func emptyDisks(path *field.Path, volumes []v1.Volume, limits Limits) field.ErrorList {
	var errs field.ErrorList
	maxCap := limits.MaxEmptyDiskCapacity
	for i, v := range volumes {
		if v.EmptyDisk == nil {
			continue
		}
		p, c := path.Index(i).Child("emptyDisk", "capacity"), v.EmptyDisk.Capacity
		switch {
		case c.Sign() <= 0:
			errs = append(errs, field.Invalid(p, c.String(), "must be greater than zero"))
		case !maxCap.IsZero() && c.Cmp(maxCap) > 0:
			errs = append(errs, field.Invalid(p, c.String(),
				fmt.Sprintf("more than the %s this cluster allows for an emptyDisk (virt-api --max-empty-disk-capacity)", maxCap.String())))
		}
	}
	return errs
}
