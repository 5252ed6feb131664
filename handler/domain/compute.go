package domain

import (
	"fmt"
	"math"
	"regexp"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"libvirt.org/go/libvirtxml"
)

const (
	// TCGCPUModel is the CPU model of emulated (TCG) guests. host-passthrough needs KVM, and
	// QEMU 7.2's TCG accepts Nehalem with ",enforce" (SandyBridge and later ask for x2apic
	// and tsc-deadline, which TCG lacks). Nehalem is x86-64-v2, so distributions that
	// require v2 (RHEL 9 and derivatives) boot, unlike on QEMU's default qemu64.
	TCGCPUModel = "Nehalem"
	// maxVCPUs: without x2APIC (TCG has none; KVM needs an IOMMU for interrupt remapping)
	// x86 APIC IDs stop at 254.
	maxVCPUs = 255
)

// memoryKiB is the guest memory: memory.guest, else the memory request, else the limit (the
// order defaults.go fills memory.guest in, for specs that were not defaulted).
func (c *converter) memoryKiB() uint64 {
	spec := &c.vmi.Spec.Domain
	var q resource.Quantity
	var p *field.Path
	if spec.Memory != nil && spec.Memory.Guest != nil {
		q, p = *spec.Memory.Guest, domainPath.Child("memory", "guest")
	} else if r, ok := spec.Resources.Requests["memory"]; ok {
		q, p = r, domainPath.Child("resources", "requests", "memory")
	} else if l, ok := spec.Resources.Limits["memory"]; ok {
		q, p = l, domainPath.Child("resources", "limits", "memory")
	} else {
		c.fail(field.Required(domainPath.Child("memory", "guest"), "no memory requested: set spec.domain.memory.guest or spec.domain.resources.requests.memory"))
		return 0
	}
	if q.Sign() <= 0 {
		c.fail(field.Invalid(p, q.String(), "must be greater than zero"))
		return 0
	}
	// Value() saturates beyond int64; refuse rather than hand libvirt a wrong size.
	if q.Cmp(*resource.NewQuantity(math.MaxInt64-1023, resource.BinarySI)) > 0 {
		c.fail(field.Invalid(p, q.String(), "is too large"))
		return 0
	}
	return (uint64(q.Value()) + 1023) / 1024
}

// cpu is the vCPU count and the CPU element: topology always, and a model TCG can emulate
// when there is no KVM (host-model and host-passthrough describe a host CPU TCG is not).
func (c *converter) cpu() (*libvirtxml.DomainVCPU, *libvirtxml.DomainCPU) {
	t := c.vmi.Spec.Domain.Topology()
	model := ""
	if spec := c.vmi.Spec.Domain.CPU; spec != nil {
		model = spec.Model
	}
	total := c.vmi.Spec.Domain.VCPUs()
	if total > maxVCPUs {
		c.fail(field.Invalid(domainPath.Child("cpu"), total, fmt.Sprintf("cores*sockets*threads must be at most %d", maxVCPUs)))
	}
	// libvirtxml's topology fields are int and omitted when zero; each is at least 1 here.
	cpu := &libvirtxml.DomainCPU{Topology: &libvirtxml.DomainCPUTopology{Sockets: int(t.Sockets), Cores: int(t.Cores), Threads: int(t.Threads)}}
	custom := func(name string) {
		cpu.Mode, cpu.Match, cpu.Model = "custom", "exact", &libvirtxml.DomainCPUModel{Fallback: "forbid", Value: name}
	}
	switch {
	case c.env.DomainType == TypeQEMU && (model == "" || model == "host-model" || model == "host-passthrough"):
		custom(TCGCPUModel)
	case model == "":
		cpu.Mode = "host-model" // KubeVirt's default on KVM
	case model == "host-model" || model == "host-passthrough":
		cpu.Mode = model
	case c.text(domainPath.Child("cpu", "model"), model):
		custom(model)
	}
	if spec := c.vmi.Spec.Domain.CPU; spec != nil {
		for i, f := range spec.Features {
			p := domainPath.Child("cpu", "features").Index(i)
			if !cpuFeatureRE.MatchString(f.Name) {
				c.fail(field.Invalid(p.Child("name"), f.Name, "must be a libvirt CPU feature name such as pcid"))
				continue
			}
			policy := f.Policy
			if policy == "" {
				policy = "require"
			}
			cpu.Features = append(cpu.Features, libvirtxml.DomainCPUFeature{Name: f.Name, Policy: policy})
		}
	}
	return &libvirtxml.DomainVCPU{Placement: "static", Value: uint(min(total, maxVCPUs))}, cpu
}

var cpuFeatureRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]*$`)

// memoryBacking backs the guest with huge pages when asked; the launcher pod requests them
// (hugepages-<size>), so an instance is only scheduled to a node that has them.
func (c *converter) memoryBacking() *libvirtxml.DomainMemoryBacking {
	m := c.vmi.Spec.Domain.Memory
	if m == nil || m.Hugepages == nil {
		return nil
	}
	p := domainPath.Child("memory", "hugepages", "pageSize")
	size, err := resource.ParseQuantity(m.Hugepages.PageSize)
	if err != nil || (size.Value() != 2<<20 && size.Value() != 1<<30) {
		c.fail(field.NotSupported(p, m.Hugepages.PageSize, []string{"2Mi", "1Gi"}))
		return nil
	}
	return &libvirtxml.DomainMemoryBacking{MemoryHugePages: &libvirtxml.DomainMemoryHugepages{
		Hugepages: []libvirtxml.DomainMemoryHugepage{{Size: uint(size.Value() >> 10), Unit: "KiB"}}}}
}
