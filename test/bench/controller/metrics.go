package main

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/util/wait"
)

// writes counts mutating API requests by "VERB resource[/subresource]", from the API server's
// apiserver_request_total: what every client wrote, split by kind of object.
type writes map[string]float64

var mutating = map[string]bool{"POST": true, "PUT": true, "PATCH": true, "DELETE": true, "APPLY": true}

func (c clients) scrapeFamilies(ctx context.Context) (map[string]*dto.MetricFamily, error) {
	raw, err := c.kube.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("scraping the API server's metrics: %w", err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(bytes.NewReader(raw))
}

func labelsOf(m *dto.Metric) map[string]string {
	labels := map[string]string{}
	for _, l := range m.GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	return labels
}

func (c clients) scrapeWrites(ctx context.Context) (writes, error) {
	families, err := c.scrapeFamilies(ctx)
	if err != nil {
		return nil, err
	}
	w := writes{}
	family, ok := families["apiserver_request_total"]
	if !ok {
		return nil, fmt.Errorf("the API server exports no apiserver_request_total")
	}
	for _, m := range family.GetMetric() {
		labels := labelsOf(m)
		if !mutating[labels["verb"]] {
			continue
		}
		key := labels["verb"] + " " + labels["resource"]
		if sub := labels["subresource"]; sub != "" {
			key += "/" + sub
		}
		w[key] += m.GetCounter().GetValue()
	}
	return w, nil
}

// writesSince is what was written since the scrape before.
func (c clients) writesSince(ctx context.Context, before writes) (writes, error) {
	now, err := c.scrapeWrites(ctx)
	if err != nil {
		return nil, err
	}
	return now.since(before), nil
}

// settledWrites waits until the controller has stopped writing (two scrapes five seconds
// apart agree) and returns what was written since before.
func (c clients) settledWrites(ctx context.Context, before writes) (writes, error) {
	var last writes
	err := wait.PollUntilContextCancel(ctx, 5*time.Second, true, func(ctx context.Context) (bool, error) {
		now, err := c.scrapeWrites(ctx)
		if err != nil {
			return false, err
		}
		settled := last != nil && maps.Equal(onlyVirt(now), onlyVirt(last))
		last = now
		return settled, nil
	})
	if err != nil {
		return nil, err
	}
	return last.since(before), nil
}

// since is what was written between the scrape before and this one.
func (w writes) since(before writes) writes {
	delta := writes{}
	for k, v := range w {
		if d := v - before[k]; d > 0 {
			delta[k] = d
		}
	}
	return delta
}

// total is the number of writes, and of them the ones to the project's custom resources.
func (w writes) total() (all, custom float64) {
	for k, v := range w {
		all += v
		if customResource(k) {
			custom += v
		}
	}
	return all, custom
}

// customResource says whether a write's key names one of the project's resources (VMs, VMIs,
// migrations, replica sets: all "virtualmachine...").
func customResource(key string) bool { return strings.Contains(key, "virtualmachine") }

func onlyVirt(w writes) writes {
	out := writes{}
	for k, v := range w {
		if customResource(k) {
			out[k] = v
		}
	}
	return out
}

// controllerMemory is the resident and peak resident memory (MiB) of the virt-controller
// process on this host, which is the cluster's only node.
func controllerMemory() (rss, peak float64, err error) {
	dirs := hostProcesses()["virt-controller"]
	if len(dirs) == 0 {
		return 0, 0, fmt.Errorf("no virt-controller process on this host")
	}
	status, err := os.ReadFile(filepath.Join(dirs[0], "status"))
	if err != nil {
		return 0, 0, err
	}
	return statusMiB(status, "VmRSS:"), statusMiB(status, "VmHWM:"), nil
}

func statusMiB(status []byte, field string) float64 {
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			kib, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kib / 1024
		}
	}
	return 0
}
