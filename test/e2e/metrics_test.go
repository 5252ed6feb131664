//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/test/e2e/framework"
	"github.com/vmctl/vmctl/test/testguest"
)

// TestMetrics: Prometheus finds each component's /metrics through its metrics Service (port
// metrics, label prometheus.kubevirt.io), and the series of a running guest are there under
// KubeVirt's names and labels: its vCPU time grows between two scrapes of its node's
// virt-handler, its interface and disk have traffic series, virt-controller counts it as
// running; virt-api serves its own metrics to an authorized client. A tenant that stops its
// launcher's libvirtd costs the scrape a few seconds and its own series, not the others'.
func TestMetrics(t *testing.T) {
	f := framework.New(t)
	for _, vmi := range []*v1.VirtualMachineInstance{
		{ObjectMeta: metav1.ObjectMeta{Name: "metered"}, Spec: testguest.DiskSpec(resource.MustParse("128Mi"), nil)},
		{ObjectMeta: metav1.ObjectMeta{Name: "stalled"}, Spec: framework.TestGuestSpec("stalled")},
	} {
		if _, err := f.Virt.KubevirtV1().VirtualMachineInstances(f.Namespace).Create(f.Context(), vmi, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	running := f.WaitVMIPhase("metered", v1.Running, bootTimeout)
	stalled := f.LauncherPod(f.WaitVMIPhase("stalled", v1.Running, bootTimeout))
	guest := map[string]string{"namespace": f.Namespace, "name": "metered", "node": running.Status.NodeName}

	handler := "http://" + metricsEndpoint(t, f, "virt-handler-metrics", running.Status.NodeName) + "/metrics"
	var first float64
	f.Eventually(time.Minute, "the guest's vCPU time on "+handler, func(ctx context.Context) (bool, error) {
		families, err := scrape(ctx, http.DefaultClient, handler)
		var found bool
		first, found = sum(families, "kubevirt_vmi_vcpu_seconds_total", guest)
		return found, err
	})
	f.Eventually(time.Minute, "the guest's vCPU time to grow", func(ctx context.Context) (bool, error) {
		families, err := scrape(ctx, http.DefaultClient, handler)
		second, _ := sum(families, "kubevirt_vmi_vcpu_seconds_total", guest)
		return second > first, err
	})
	families, err := scrape(f.Context(), http.DefaultClient, handler)
	if err != nil {
		t.Fatal(err)
	}
	for name, labels := range map[string]map[string]string{
		"kubevirt_vmi_network_receive_bytes_total":      with(guest, "interface", "default"),
		"kubevirt_vmi_network_transmit_bytes_total":     with(guest, "interface", "default"),
		"kubevirt_vmi_storage_read_traffic_bytes_total": with(guest, "drive", "root"),
		"kubevirt_vmi_storage_iops_read_total":          with(guest, "drive", "root"),
		"kubevirt_vmi_memory_resident_bytes":            guest,
		"kubevirt_vmi_memory_domain_bytes":              guest,
	} {
		if v, found := sum(families, name, labels); !found {
			t.Errorf("virt-handler: no %s%v", name, labels)
		} else if strings.HasPrefix(name, "kubevirt_vmi_storage_read") && v == 0 {
			t.Errorf("virt-handler: %s%v is 0, but the guest booted from that disk", name, labels)
		}
	}

	// Every virt-controller replica serves /metrics; the elected one counts the instances.
	f.Eventually(time.Minute, "virt-controller to count the guest running", func(ctx context.Context) (bool, error) {
		for _, addr := range metricsEndpoints(t, f, "virt-controller-metrics") {
			families, err := scrape(ctx, http.DefaultClient, "http://"+addr+"/metrics")
			if err != nil {
				return false, err
			}
			if n, _ := sum(families, "kubevirt_vmi_phase_count", map[string]string{"phase": "running", "node": running.Status.NodeName}); n >= 1 {
				return true, nil
			}
		}
		return false, nil
	})

	f.Kubectl("exec", stalled.Name, "-c", "compute", "--", "sh", "-c", fmt.Sprintf(signalLibvirtd, "STOP"))
	defer f.Kubectl("exec", stalled.Name, "-c", "compute", "--", "sh", "-c", fmt.Sprintf(signalLibvirtd, "CONT"))
	start := time.Now()
	families, err = scrape(f.Context(), http.DefaultClient, handler)
	took := time.Since(start)
	if err != nil {
		t.Fatalf("scraping with a stopped launcher: %v", err)
	}
	t.Logf("a scrape with a stopped launcher took %s", took.Round(time.Millisecond))
	if took > 9*time.Second {
		t.Errorf("a scrape with a stopped launcher took %s, want under the handler's 8 s bound", took)
	}
	if _, found := sum(families, "kubevirt_vmi_vcpu_seconds_total", guest); !found {
		t.Errorf("with another tenant's launcher stopped, the guest's series are gone")
	}

	api, err := virtAPIClient(f)
	if err != nil {
		t.Fatal(err)
	}
	families, err = scrape(f.Context(), api, "https://"+metricsEndpoints(t, f, "virt-api-metrics")[0]+"/metrics")
	if err != nil {
		t.Fatalf("virt-api: %v", err)
	}
	if _, found := sum(families, "apiserver_request_total", nil); !found {
		t.Errorf("virt-api: no apiserver_request_total")
	}
}

// metricsEndpoints are the host:port of a metrics Service's ready endpoints, from its
// EndpointSlices, as Prometheus' service discovery finds them: the Service must select the
// pods and name its port metrics.
func metricsEndpoints(t *testing.T, f *framework.Framework, service string) []string {
	t.Helper()
	var out []string
	for _, ep := range endpointsOf(t, f, service) {
		out = append(out, ep.addr)
	}
	if len(out) == 0 {
		t.Fatalf("service %s has no ready endpoint on port metrics", service)
	}
	return out
}

// metricsEndpoint is the endpoint of a metrics Service on a node.
func metricsEndpoint(t *testing.T, f *framework.Framework, service, node string) string {
	t.Helper()
	for _, ep := range endpointsOf(t, f, service) {
		if ep.node == node {
			return ep.addr
		}
	}
	t.Fatalf("service %s has no ready endpoint on node %s", service, node)
	return ""
}

type endpoint struct{ addr, node string }

func endpointsOf(t *testing.T, f *framework.Framework, service string) []endpoint {
	t.Helper()
	svc, err := f.Kube.CoreV1().Services(framework.ProjectNamespace).Get(f.Context(), service, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if svc.Labels["prometheus.kubevirt.io"] != "true" {
		t.Errorf("service %s lacks the label prometheus.kubevirt.io=true", service)
	}
	slices, err := f.Kube.DiscoveryV1().EndpointSlices(framework.ProjectNamespace).List(f.Context(), metav1.ListOptions{
		LabelSelector: discoveryv1.LabelServiceName + "=" + service})
	if err != nil {
		t.Fatal(err)
	}
	var out []endpoint
	for _, s := range slices.Items {
		var port int32
		for _, p := range s.Ports {
			if p.Name != nil && *p.Name == "metrics" && p.Port != nil {
				port = *p.Port
			}
		}
		for _, e := range s.Endpoints {
			if port == 0 || len(e.Addresses) == 0 || (e.Conditions.Ready != nil && !*e.Conditions.Ready) {
				continue
			}
			node := ""
			if e.NodeName != nil {
				node = *e.NodeName
			}
			out = append(out, endpoint{net.JoinHostPort(e.Addresses[0], strconv.Itoa(int(port))), node})
		}
	}
	return out
}

// virtAPIClient speaks to virt-api as the suite's user (the kubeconfig's client certificate,
// which virt-api's delegated authentication accepts), trusting virt-api's own CA as the
// monitoring component's ServiceMonitor does.
func virtAPIClient(f *framework.Framework) (*http.Client, error) {
	secret, err := f.Kube.CoreV1().Secrets(framework.ProjectNamespace).Get(f.Context(), "virt-api-certs", metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	cfg, err := rest.TLSConfigFor(f.Config)
	if err != nil {
		return nil, err
	}
	if cfg == nil {
		cfg = &tls.Config{}
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(secret.Data["ca.crt"]) {
		return nil, fmt.Errorf("secret virt-api-certs has no CA in ca.crt")
	}
	cfg.RootCAs, cfg.ServerName = roots, "virt-api."+framework.ProjectNamespace+".svc"
	return &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}, nil
}

// scrape fetches and parses a /metrics page.
func scrape(ctx context.Context, client *http.Client, url string) (map[string]*dto.MetricFamily, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(bytes.NewReader(body))
}

// sum adds up the series of a family that have all the labels, and says whether any had.
func sum(families map[string]*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
	var total float64
	found := false
	for _, m := range families[name].GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range labels {
			match = match && have[k] == v
		}
		if !match {
			continue
		}
		found = true
		total += m.GetCounter().GetValue() + m.GetGauge().GetValue() + m.GetUntyped().GetValue()
	}
	return total, found
}

// with is labels and one more.
func with(labels map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for lk, lv := range labels {
		out[lk] = lv
	}
	return out
}
