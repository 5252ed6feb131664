//go:build chaos

// Package chaos is `make chaos`: a mixed workload on the local cluster's two real nodes,
// then one fault at a time (processes of the project killed, the API server paused, etcd
// restarted, a node lost and brought back). Around each fault it samples what must always
// hold (no VM runs twice, no written record of a PVC is lost) and afterwards checks that
// everything that should run is running again; it reports how long each recovery took.
// Recovery times are reported, never asserted: the deadlines only bound the run.
package chaos

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmctl/vmctl/test/apiserver"
	"github.com/vmctl/vmctl/test/e2e/framework"
)

// faultDeadline bounds each wait of a fault (recovery, the node's return): generous, since
// guests boot under TCG on two cores, and never a pass mark.
const faultDeadline = 6 * time.Minute

type chaos struct {
	t           *testing.T
	f           *framework.Framework
	ns          string
	root        string   // the repository, for hack/cluster and _cluster
	nodes       []string // real nodes, sorted
	lostNode    string   // the node the node-lost fault takes down, "" with one node
	journalDisk string
	cur         *testing.T // the running fault's subtest, for logs
}

var errSkip = errors.New("skipped")

// TestChaos sets the workload up once, then runs the faults in order (CHAOS_SHORT=1: the CI
// subset), each as a subtest, and ends with the report table.
func TestChaos(t *testing.T) {
	short := os.Getenv("CHAOS_SHORT") == "1"
	f := framework.New(t)
	root, err := apiserver.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	c := &chaos{t: t, f: f, ns: f.Namespace, root: root}
	nodes, err := f.Kube.CoreV1().Nodes().List(f.Context(), metav1.ListOptions{LabelSelector: "type!=kwok"})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		c.nodes = append(c.nodes, n.Name)
	}
	slices.Sort(c.nodes)
	if len(c.nodes) == 0 {
		t.Fatal("no real node")
	}
	if len(c.nodes) > 1 {
		c.lostNode = c.nodes[1]
		if n := os.Getenv("CHAOS_NODE"); n != "" {
			c.lostNode = n
		}
	}
	t.Logf("real nodes %v; the node-lost fault takes %q", c.nodes, c.lostNode)

	start := time.Now()
	c.journalDisk = createWorkload(t, f, c.nodes[0], c.lostNode)
	if err := poll(f.Context(), 10*time.Minute, func(ctx context.Context) error { return c.healthy(ctx, "") }); err != nil {
		t.Fatalf("workload: %v", err)
	}
	// A few records on the disk first, so the first fault already has some to lose.
	if err := poll(f.Context(), 2*time.Minute, func(context.Context) error {
		j, err := framework.ReadJournal(c.journalDisk)
		if err == nil && len(j.Records) < 3 {
			err = fmt.Errorf("%d journal records", len(j.Records))
		}
		return err
	}); err != nil {
		t.Fatalf("journal: %v", err)
	}
	t.Logf("workload running after %s", since(start))

	var rows []row
	for _, fl := range faults {
		if short && !fl.short {
			continue
		}
		t.Run(fl.name, func(t *testing.T) {
			c.cur = t
			rows = append(rows, c.run(t, fl))
		})
	}
	report := formatReport(rows, short)
	t.Log("\n" + report)
	if path, err := writeReport(root, report); err != nil {
		t.Errorf("write report: %v", err)
	} else {
		t.Logf("report written to %s", path)
	}
}

// run injects one fault, waits for the recovery and checks the invariants.
func (c *chaos) run(t *testing.T, fl fault) (r row) {
	r = row{fault: fl.name, recovery: "-", back: "-"}
	ctx, cancel := context.WithTimeout(context.Background(), 4*faultDeadline)
	defer cancel()
	var failures []string
	fail := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		t.Error(msg)
		failures = append(failures, msg)
	}
	defer func() {
		if r.checks == "" {
			r.checks = checksSummary(failures)
		}
	}()

	if err := poll(ctx, faultDeadline, func(ctx context.Context) error { return c.healthy(ctx, "") }); err != nil {
		fail("not healthy before the fault: %v", err)
		return r
	}
	states, err := c.vmStates(ctx)
	if err != nil {
		fail("VM objects before: %v", err)
		return r
	}
	before, err := framework.ReadJournal(c.journalDisk)
	if err != nil {
		fail("journal before: %v", err)
		return r
	}
	restarts, err := c.componentRestarts(ctx)
	if err != nil {
		fail("components before: %v", err)
		return r
	}
	s, stopSampling := c.startSampler(ctx, before)
	defer func() {
		// Also when the recovery failed: what the sampler saw is the point of the suite.
		stopSampling()
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, v := range s.violations {
			fail("invariant: %s", v)
		}
		r.notes = fmt.Sprintf("max VMIs/VM %d, max QEMU/VM %d, journal %d->%d records (%d boots), %d samples",
			s.maxVMIs, s.maxGuests, len(before.Records), len(s.journal.Records), len(s.journal.Boots), s.samples)
		// Fresh context: the run's may be over when the recovery failed.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if after, err := c.componentRestarts(ctx); err == nil {
			r.notes += "; component restarts: " + restartsSince(restarts, after)
		}
	}()

	e, err := fl.inject(ctx, c)
	defer func() {
		// A lost node comes back whatever else happened: later faults and tests need it.
		if e.restore == nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), faultDeadline)
		defer cancel()
		if err := e.restore(ctx); err != nil {
			fail("bring %s back: %v", e.lost, err)
		}
	}()
	if errors.Is(err, errSkip) {
		// Not t.Skip: the row must still reach the report.
		t.Log("skipped: needs a second real node (make cluster-up REAL_NODES=2)")
		r.checks = "skipped: one real node"
		return r
	}
	if err != nil {
		fail("inject: %v", err)
		return r
	}
	at, err := c.waitRecovered(ctx, fl, e)
	if err != nil {
		fail("no recovery: %v", err)
		return r
	}
	r.recovery = at.Sub(e.start).Round(100 * time.Millisecond).String()
	t.Logf("recovered in %s", r.recovery)

	if e.restore != nil {
		backStart := time.Now()
		restore := e.restore
		e.restore = nil
		if err := restore(ctx); err != nil {
			fail("bring %s back: %v", e.lost, err)
			return r
		}
		// Used again: the DaemonSet's pod there runs its clone there, virt-handler runs there.
		at, err := c.waitRecovered(ctx, fl, effect{})
		if err != nil {
			fail("%s back, but not used again: %v", e.lost, err)
			return r
		}
		r.back = at.Sub(backStart).Round(100 * time.Millisecond).String()
		t.Logf("%s back in use after %s", e.lost, r.back)
	}
	c.checkAfter(ctx, t, s, states, before, fail)
	return r
}

// checkAfter checks what must have come through the fault: the VM objects, and the journal,
// which keeps every record written before and grows again.
func (c *chaos) checkAfter(ctx context.Context, t *testing.T, s *sampler, states map[string]vmState, before framework.Journal, fail func(string, ...any)) {
	after, err := c.vmStates(ctx)
	if err != nil {
		fail("VM objects after: %v", err)
	} else {
		for _, d := range compareStates(states, after) {
			fail("%s", d)
		}
	}
	s.mu.Lock()
	seen := len(s.journal.Records)
	s.mu.Unlock()
	err = poll(ctx, time.Minute, func(context.Context) error {
		j, err := framework.ReadJournal(c.journalDisk)
		if err != nil {
			return err
		}
		if err := j.Keeps(before); err != nil {
			return err
		}
		if len(j.Records) < seen+3 {
			return fmt.Errorf("journal not written since the recovery (%d records)", len(j.Records))
		}
		return nil
	})
	if err != nil {
		fail("journal: %v", err)
	}
}

func since(t time.Time) string { return time.Since(t).Round(100 * time.Millisecond).String() }

func (c *chaos) logf(format string, args ...any) { c.cur.Logf(format, args...) }
