package controller

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// creations records every object a watch saw added, by key, from the moment it started: it
// catches a creation even when the object was deleted again before any poll could see it
// (there is no audit log in this cluster).
type creations struct {
	what string
	mu   sync.Mutex
	uids map[string][]types.UID
	err  error // why the watch ended before the test did
}

// recordVMIs records the instances created in ns, keyed by name, until the test ends.
func recordVMIs(t *testing.T, ns string) *creations {
	t.Helper()
	w, err := virt.KubevirtV1().VirtualMachineInstances(ns).Watch(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return record(t, "instances in "+ns, w, func(o metav1.Object) string { return o.GetName() })
}

// recordLauncherPods records the launcher pods created in ns, keyed by their instance's UID,
// until the test ends.
func recordLauncherPods(t *testing.T, ns string) *creations {
	t.Helper()
	w, err := kube.CoreV1().Pods(ns).Watch(t.Context(), metav1.ListOptions{
		LabelSelector: labels.Set{v1.AppLabel: v1.LauncherApp}.String()})
	if err != nil {
		t.Fatal(err)
	}
	return record(t, "launcher pods in "+ns, w, func(o metav1.Object) string { return o.GetLabels()[v1.CreatedByLabel] })
}

func record(t *testing.T, what string, w watch.Interface, key func(metav1.Object) string) *creations {
	c := &creations{what: what, uids: map[string][]types.UID{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			m, ok := ev.Object.(metav1.Object)
			if ev.Type != watch.Added || !ok {
				continue
			}
			c.mu.Lock()
			c.uids[key(m)] = append(c.uids[key(m)], m.GetUID())
			c.mu.Unlock()
		}
		if t.Context().Err() == nil {
			c.mu.Lock()
			c.err = fmt.Errorf("the watch on %s ended early", what)
			c.mu.Unlock()
		}
	}()
	t.Cleanup(func() { w.Stop(); <-done })
	return c
}

// of is what was created under key, in order.
func (c *creations) of(key string) []types.UID {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]types.UID(nil), c.uids[key]...)
}

// total counts every creation seen.
func (c *creations) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, uids := range c.uids {
		n += len(uids)
	}
	return n
}

// keysWithMore lists the keys that saw more than want creations, with their UIDs.
func (c *creations) keysWithMore(want int) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for k, uids := range c.uids {
		if len(uids) > want {
			out = append(out, fmt.Sprintf("%s: %v", k, uids))
		}
	}
	sort.Strings(out)
	return out
}

// expect fails the test unless exactly n creations are recorded under key, giving the watch a
// moment to deliver the last ones: the objects were seen through other reads first.
func (c *creations) expect(t *testing.T, key string, n int) {
	t.Helper()
	c.check(t)
	_ = wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 15*time.Second, true, func(context.Context) (bool, error) {
		return len(c.of(key)) >= n, nil
	})
	if got := c.of(key); len(got) != n {
		t.Errorf("%s: created under %q: %v, want %d", c.what, key, got, n)
	}
}

// check fails the test when the watch ended early: what it recorded is incomplete.
func (c *creations) check(t *testing.T) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		t.Fatal(c.err)
	}
}
