package main

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// auditEvent is the part of an audit log line the bench reads.
type auditEvent struct {
	Stage     string `json:"stage"`
	Verb      string `json:"verb"`
	UserAgent string `json:"userAgent"`
	User      struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource  string `json:"resource"`
		Namespace string `json:"namespace"`
	} `json:"objectRef"`
	Received metav1.MicroTime `json:"requestReceivedTimestamp"`
}

// countWrites counts, by component, the mutating requests about a namespace's objects
// received between from and to (the cluster logs only mutating requests), and separately how
// many of them were events. The bench's own requests are left out. Writes about nodes, leases
// and other cluster-wide objects happen with or without VMs and are not counted.
func countWrites(path, namespace string, from, to time.Time) (writes, events map[string]float64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	writes, events = map[string]float64{}, map[string]float64{}
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 1<<20), 16<<20)
	for scanner.Scan() {
		var e auditEvent
		if json.Unmarshal(scanner.Bytes(), &e) != nil || e.Stage != "ResponseComplete" || e.ObjectRef == nil {
			continue
		}
		if e.ObjectRef.Namespace != namespace || strings.HasPrefix(e.UserAgent, userAgent) ||
			e.Received.Time.Before(from) || e.Received.Time.After(to) {
			continue
		}
		c := component(e.User.Username)
		writes[c]++
		if e.ObjectRef.Resource == "events" {
			events[c]++
		}
	}
	return writes, events, scanner.Err()
}

// component names the part of the cluster an API user is.
func component(user string) string {
	switch {
	case strings.HasPrefix(user, "system:node:"):
		return "kubelet"
	case user == "system:kube-scheduler":
		return "kube-scheduler"
	case user == "system:kube-controller-manager", strings.HasPrefix(user, "system:serviceaccount:kube-system:"):
		return "kube-controller-manager"
	case strings.HasPrefix(user, "system:serviceaccount:kubevirt:"):
		return strings.TrimPrefix(user, "system:serviceaccount:kubevirt:")
	case strings.HasPrefix(user, "system:serviceaccount:") && strings.HasSuffix(user, ":vmctl"):
		return "vmctl"
	}
	return user
}
