package webhook

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/spf13/pflag"
	admissionv1 "k8s.io/api/admission/v1"

	"github.com/vmctl/vmctl/virtapi/admission"
)

func TestReviewRoundTrip(t *testing.T) {
	body := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"abc","operation":"CREATE",
"resource":{"group":"kubevirt.io","version":"v1","resource":"virtualmachineinstances"},"name":"x",
"object":{"metadata":{"name":"x"},"spec":{"domain":{"devices":{}}}}}}`
	rec := httptest.NewRecorder()
	Handler(admission.DefaultLimits(), nil).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/validate-virtualmachineinstances", bytes.NewBufferString(body)))
	var out admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if out.Kind != "AdmissionReview" || out.Response == nil || out.Response.UID != "abc" || out.Response.Allowed {
		t.Fatalf("response %s", rec.Body.String())
	}
	rec = httptest.NewRecorder()
	Handler(admission.DefaultLimits(), nil).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/mutate-virtualmachineinstances", bytes.NewBufferString("{")))
	if rec.Code != http.StatusBadRequest {
		t.Fatalf("garbage: %d", rec.Code)
	}
}

func TestMaxEmptyDiskCapacityFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // "" for a parse error
	}{
		{nil, "100Gi"},
		{[]string{"--max-empty-disk-capacity=1Ti"}, "1Ti"},
		{[]string{"--max-empty-disk-capacity=0"}, "0"},
		{[]string{"--max-empty-disk-capacity=-1Gi"}, ""},
		{[]string{"--max-empty-disk-capacity=lots"}, ""},
	} {
		limits := admission.DefaultLimits()
		fs := pflag.NewFlagSet("virt-api", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		AddFlags(fs, &limits)
		err := fs.Parse(tc.args)
		if got := limits.MaxEmptyDiskCapacity.String(); (err != nil) != (tc.want == "") || (err == nil && got != tc.want) {
			t.Errorf("%v: limit %s, error %v; want %q", tc.args, got, err, tc.want)
		}
	}
}

func TestFeatureGatesFlag(t *testing.T) {
	for _, tc := range []struct {
		args                       []string
		hostDisk, sidecar, metrics bool
	}{
		{args: nil},
		{args: []string{"--feature-gates=HostDisk"}, hostDisk: true},
		{args: []string{"--feature-gates=Snapshot, HostDisk"}, hostDisk: true},
		{args: []string{"--feature-gates=Snapshot", "--feature-gates=HostDisk"}, hostDisk: true},
		{args: []string{"--feature-gates=hostdisk"}}, // KubeVirt's names are case-sensitive
		{args: []string{"--feature-gates="}},
		{args: []string{"--feature-gates=Sidecar"}, sidecar: true},
		{args: []string{"--feature-gates=HostDisk,Sidecar"}, hostDisk: true, sidecar: true},
		{args: []string{"--feature-gates=HostDisk,Sidecar,DownwardMetrics"}, hostDisk: true, sidecar: true, metrics: true},
	} {
		limits := admission.DefaultLimits()
		fs := pflag.NewFlagSet("virt-api", pflag.ContinueOnError)
		AddFlags(fs, &limits)
		if err := fs.Parse(tc.args); err != nil || limits.HostDisk != tc.hostDisk || limits.Sidecar != tc.sidecar || limits.DownwardMetrics != tc.metrics {
			t.Errorf("%v: HostDisk %v, Sidecar %v, DownwardMetrics %v, error %v; want %v, %v, %v", tc.args,
				limits.HostDisk, limits.Sidecar, limits.DownwardMetrics, err, tc.hostDisk, tc.sidecar, tc.metrics)
		}
	}
}
