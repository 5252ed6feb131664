package vmctl

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// MaxNameLength is the longest clone name: a DNS label. A VM's name becomes its instance's
// name, the value of labels and part of its launcher pod's name, so the clone keeps to the
// strictest of those rather than the 253 characters the API would accept.
const MaxNameLength = 63

// hashLength is how many hex characters of the full name's SHA-256 a shortened name ends with:
// 32 bits keep clones of one prototype apart across thousands of pods.
const hashLength = 8

// CloneName is the clone's name, <proto>-<pod>. Dots (legal in both names) become dashes. A
// name longer than MaxNameLength keeps its readable beginning and ends with "-" and the first
// eight hex characters of the SHA-256 of the full name, so it is stable (a restarted vmctl
// finds its clone again) and distinct for pods that differ only at the end of their names,
// as a Deployment's do.
func CloneName(proto, pod string) string {
	return shorten(strings.ReplaceAll(proto+"-"+pod, ".", "-"), MaxNameLength)
}

// labelValue fits a name into a label value (at most 63 characters), the same way.
func labelValue(s string) string {
	return shorten(s, MaxNameLength)
}

func shorten(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	suffix := hex.EncodeToString(sum[:])[:hashLength]
	// Names and label values must end alphanumeric: drop separators left at the cut.
	head := strings.TrimRight(s[:limit-hashLength-1], "-._")
	return head + "-" + suffix
}
