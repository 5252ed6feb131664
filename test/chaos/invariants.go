//go:build chaos

package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmctl/vmctl/test/e2e/framework"
)

// sampler checks, every second while a fault runs, what must hold at every instant and not
// only once things settle: no VM ever has two instances or two QEMU processes, and no
// journal record once seen ever changes. QEMU is counted from /proc, so that invariant is
// sampled even while the API server is paused or etcd is down; API errors only skip the
// instance count of that second.
type sampler struct {
	mu         sync.Mutex
	samples    int
	apiMisses  int
	violations []string
	maxGuests  int // most QEMU processes seen at once for one instance
	maxVMIs    int // most instances seen at once for one VM
	journal    framework.Journal
	done       chan struct{}
}

// maxSamples bounds a sampler: a fault's deadline plus the node's return, at 1 Hz.
const maxSamples = 20 * 60

func (c *chaos) startSampler(ctx context.Context, j framework.Journal) (*sampler, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	s := &sampler{journal: j, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for i := 0; i < maxSamples; i++ {
			s.sample(ctx, c)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return s, func() { cancel(); <-s.done }
}

func (s *sampler) sample(ctx context.Context, c *chaos) {
	now := time.Now().Format("15:04:05")
	var bad []string
	guests := guestCounts(c.ns)
	most := 0
	for name, n := range guests {
		most = max(most, n)
		if n > 1 {
			bad = append(bad, fmt.Sprintf("%s: %d QEMU processes run %s", now, n, name))
		}
	}
	j, jerr := framework.ReadJournal(c.journalDisk)
	if jerr != nil {
		bad = append(bad, fmt.Sprintf("%s: journal: %v", now, jerr))
	}
	s.mu.Lock()
	prev := s.journal
	s.mu.Unlock()
	if jerr == nil {
		if err := j.Keeps(prev); err != nil {
			bad = append(bad, fmt.Sprintf("%s: journal: %v", now, err))
		}
	}
	vmis, apiErr := c.vmisPerVM(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.samples++
	s.maxGuests = max(s.maxGuests, most)
	if jerr == nil && len(j.Records) >= len(prev.Records) {
		s.journal = j
	}
	if apiErr != nil {
		s.apiMisses++
	} else {
		for vm, n := range vmis {
			s.maxVMIs = max(s.maxVMIs, n)
			if n > 1 {
				bad = append(bad, fmt.Sprintf("%s: VM %s has %d instances", now, vm, n))
			}
		}
	}
	// Keep the first few: one double start repeats every second until it ends.
	for _, b := range bad {
		if len(s.violations) < 20 {
			s.violations = append(s.violations, b)
		}
	}
}

// vmisPerVM counts the instances owned by each VM (by ownerReference, so an instance of a
// VM that was deleted and made again under the same name counts for the old one).
func (c *chaos) vmisPerVM(ctx context.Context) (map[string]int, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	vmis, err := c.f.Virt.KubevirtV1().VirtualMachineInstances(c.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	counts := map[string]int{}
	for _, vmi := range vmis.Items {
		for _, ref := range vmi.OwnerReferences {
			if ref.Kind == "VirtualMachine" {
				counts[ref.Name+"/"+string(ref.UID)]++
			}
		}
	}
	return counts, nil
}

// vmState is what of a VM object no fault may change.
type vmState struct {
	UID        string
	Generation int64
	Spec       string
}

// vmStates records the fixed VMs' objects.
func (c *chaos) vmStates(ctx context.Context) (map[string]vmState, error) {
	out := map[string]vmState{}
	for _, name := range fixedVMs {
		vm, err := c.f.Virt.KubevirtV1().VirtualMachines(c.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		spec, err := json.Marshal(vm.Spec)
		if err != nil {
			return nil, err
		}
		out[name] = vmState{UID: string(vm.UID), Generation: vm.Generation, Spec: string(spec)}
	}
	return out, nil
}

// compareStates lists how the VM objects differ between before and after a fault.
func compareStates(before, after map[string]vmState) []string {
	var diffs []string
	for name, b := range before {
		a := after[name]
		switch {
		case a.UID != b.UID:
			diffs = append(diffs, fmt.Sprintf("VM %s replaced (uid %s -> %s)", name, b.UID, a.UID))
		case a.Generation != b.Generation:
			diffs = append(diffs, fmt.Sprintf("VM %s generation %d -> %d", name, b.Generation, a.Generation))
		case a.Spec != b.Spec:
			diffs = append(diffs, fmt.Sprintf("VM %s spec changed", name))
		}
	}
	return diffs
}
