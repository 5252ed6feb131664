package vmctl

import (
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestCloneName(t *testing.T) {
	long := strings.Repeat("a", 40)
	tests := []struct {
		name, proto, pod, want string
	}{
		{name: "short", proto: "testvm", pod: "vmctl-5d8f-abcde", want: "testvm-vmctl-5d8f-abcde"},
		{name: "dots", proto: "web.v1", pod: "pod.x", want: "web-v1-pod-x"},
		{name: "exactly 63", proto: strings.Repeat("p", 31), pod: strings.Repeat("q", 31), want: strings.Repeat("p", 31) + "-" + strings.Repeat("q", 31)},
		{name: "64 is cut", proto: strings.Repeat("p", 31), pod: strings.Repeat("q", 32),
			want: strings.Repeat("p", 31) + "-" + strings.Repeat("q", 22) + "-" + sha8(strings.Repeat("p", 31)+"-"+strings.Repeat("q", 32))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CloneName(tt.proto, tt.pod)
			if got != tt.want {
				t.Errorf("CloneName = %q, want %q", got, tt.want)
			}
		})
	}

	// Long names: valid DNS labels, stable, distinct for pods differing only at the end, and
	// readable (they start with the prototype's name).
	a, b := CloneName(long, "vmctl-7c9f8d6b5-aaaaa-"+long), CloneName(long, "vmctl-7c9f8d6b5-aaaaa-"+long+"x")
	for _, n := range []string{a, b} {
		if errs := validation.IsDNS1123Label(n); len(errs) > 0 {
			t.Errorf("%q: %v", n, errs)
		}
		if len(n) != MaxNameLength || !strings.HasPrefix(n, long+"-") {
			t.Errorf("%q: want %d characters starting with the prototype's name", n, MaxNameLength)
		}
	}
	if a == b {
		t.Errorf("two pods got the same clone name %q", a)
	}
	if again := CloneName(long, "vmctl-7c9f8d6b5-aaaaa-"+long); again != a {
		t.Errorf("not stable: %q then %q", a, again)
	}
	// A cut landing on a separator leaves no trailing dash before the hash.
	if n := CloneName(strings.Repeat("p", 53), "-"+long); strings.Contains(n, "--") {
		t.Errorf("%q has a doubled dash", n)
	}
}

func sha8(s string) string { return fmt.Sprintf("%x", sha256.Sum256([]byte(s)))[:8] }
