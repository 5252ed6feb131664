package v1

import (
	"testing"

	"k8s.io/utils/ptr"
)

func TestEvictionStrategyOr(t *testing.T) {
	for _, tc := range []struct {
		name  string
		named *EvictionStrategy
		def   EvictionStrategy
		want  EvictionStrategy
	}{
		{"names none: the default", nil, EvictionStrategyExternal, EvictionStrategyExternal},
		{"names none, no default", nil, "", ""},
		{"names one: its own", ptr.To(EvictionStrategyNone), EvictionStrategyExternal, EvictionStrategyNone},
	} {
		s := VirtualMachineInstanceSpec{EvictionStrategy: tc.named}
		if got := s.EvictionStrategyOr(tc.def); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}
