// Package webhook serves virt-api's admission webhooks over TLS: /validate-<resource> and
// /mutate-<resource> for virtualmachines, virtualmachineinstances and
// virtualmachineinstancereplicasets, each a thin HTTP layer over package admission, and
// /validate-pods-eviction, which turns a drain's eviction of a launcher pod into a migration.
package webhook

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/pflag"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/klog/v2"

	"github.com/vmctl/vmctl/virtapi/admission"
)

// maxBody bounds a review: the apiserver limits objects to ~3 MiB.
const maxBody = 6 << 20

// Handler is the webhooks' mux; validation holds specs to limits; evictions intercepts the
// evictions of launcher pods (/validate-pods-eviction) when not nil.
func Handler(limits admission.Limits, evictions *Evictions) http.Handler {
	mux := http.NewServeMux()
	validate := func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		return admission.Validate(req, limits)
	}
	for _, r := range []string{admission.VirtualMachines, admission.VirtualMachineInstances, admission.ReplicaSets} {
		mux.Handle("/validate-"+r, review(validate))
		mux.Handle("/mutate-"+r, review(admission.Mutate))
	}
	if evictions != nil {
		mux.Handle("/validate-pods-eviction", review(evictions.review))
	}
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	return mux
}

// review decodes an AdmissionReview, answers it with decide, and echoes its apiVersion.
func review(decide func(*admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST an AdmissionReview", http.StatusMethodNotAllowed)
			return
		}
		var in admissionv1.AdmissionReview
		if err := json.NewDecoder(io.LimitReader(r.Body, maxBody)).Decode(&in); err != nil || in.Request == nil {
			http.Error(w, fmt.Sprintf("not an AdmissionReview: %v", err), http.StatusBadRequest)
			return
		}
		out := admissionv1.AdmissionReview{TypeMeta: in.TypeMeta, Response: decide(in.Request)}
		out.Response.UID = in.Request.UID
		if !out.Response.Allowed {
			klog.V(2).InfoS("denied", "resource", in.Request.Resource.Resource, "name", in.Request.Name, "reason", out.Response.Result.Message)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	})
}

// AddFlags registers the limits' flags on fs; limits holds their defaults and, once fs is
// parsed, their values.
func AddFlags(fs *pflag.FlagSet, limits *admission.Limits) {
	fs.Var((*quantityFlag)(&limits.MaxEmptyDiskCapacity), "max-empty-disk-capacity",
		"the largest spec.volumes[].emptyDisk.capacity admitted (a sparse file on the node's disk the guest may fill); 0 for no limit")
	fs.Var((*featureGates)(limits), "feature-gates",
		"KubeVirt feature gates to enable, comma-separated (KubeVirt's developerConfiguration.featureGates): "+admission.HostDiskGate+" admits hostDisk volumes, "+admission.SidecarGate+" hook sidecars, "+admission.DownwardMetricsGate+" downward metrics")
}

// featureGates sets the limits' feature gates from their KubeVirt names. A gate KubeVirt has
// and this platform does not (most are always on here, or name what it refuses with a
// reason) is logged and ignored, so an operator's list from KubeVirt does not stop virt-api.
type featureGates admission.Limits

func (g *featureGates) String() string {
	var on []string
	if g.HostDisk {
		on = append(on, admission.HostDiskGate)
	}
	if g.Sidecar {
		on = append(on, admission.SidecarGate)
	}
	if g.DownwardMetrics {
		on = append(on, admission.DownwardMetricsGate)
	}
	return strings.Join(on, ",")
}
func (g *featureGates) Type() string { return "strings" }
func (g *featureGates) Set(s string) error {
	for _, name := range strings.Split(s, ",") {
		switch name = strings.TrimSpace(name); name {
		case "":
		case admission.HostDiskGate:
			g.HostDisk = true
		case admission.SidecarGate:
			g.Sidecar = true
		case admission.DownwardMetricsGate:
			g.DownwardMetrics = true
		default:
			klog.InfoS("ignoring a feature gate this platform does not have", "gate", name)
		}
	}
	return nil
}

// quantityFlag is a resource.Quantity as a flag value ("100Gi").
type quantityFlag resource.Quantity

func (q *quantityFlag) String() string { return (*resource.Quantity)(q).String() }
func (q *quantityFlag) Type() string   { return "quantity" }
func (q *quantityFlag) Set(s string) error {
	v, err := resource.ParseQuantity(s)
	if err != nil {
		return err
	}
	if v.Sign() < 0 {
		return fmt.Errorf("%s: must not be negative", s)
	}
	*q = quantityFlag(v)
	return nil
}

// Serve serves Handler(limits) on addr with the certificate getCert returns (rotated by the
// caller) until ctx ends.
func Serve(ctx context.Context, addr string, getCert func(*tls.ClientHelloInfo) (*tls.Certificate, error), limits admission.Limits, evictions *Evictions) error {
	srv := &http.Server{
		Addr:              addr,
		Handler:           Handler(limits, evictions),
		TLSConfig:         &tls.Config{GetCertificate: getCert, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	err := srv.ListenAndServeTLS("", "")
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
