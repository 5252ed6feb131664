package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/apiserver/pkg/endpoints/request"

	"github.com/vmctl/vmctl/virtapi/subresources"
)

func TestAggregatedDiscoveryNestsTheSubresources(t *testing.T) {
	v := aggregatedVersion()
	if len(v.Resources) != 3 {
		t.Fatalf("resources %+v", v.Resources)
	}
	vm, expand, vmi := v.Resources[0], v.Resources[1], v.Resources[2]
	if expand.Resource != "expand-vm-spec" || len(expand.Verbs) != 1 || expand.Verbs[0] != "update" || len(expand.Subresources) != 0 {
		t.Fatalf("expand-vm-spec %+v, want verb update", expand)
	}
	if vm.Resource != "virtualmachines" || len(vm.Subresources) != 6 || vm.Subresources[0].Subresource != "start" || vm.Subresources[0].Verbs[0] != "update" {
		t.Fatalf("virtualmachines %+v", vm)
	}
	if vmi.Resource != "virtualmachineinstances" || len(vmi.Subresources) != 12 || vmi.Subresources[0].Subresource != "console" || vmi.Subresources[0].Verbs[0] != "get" {
		t.Fatalf("virtualmachineinstances %+v", vmi)
	}
	for i, want := range []string{"pause", "unpause", "softreboot", "freeze", "unfreeze"} {
		if sub := vmi.Subresources[1+i]; sub.Subresource != want || len(sub.Verbs) != 1 || sub.Verbs[0] != "update" {
			t.Errorf("virtualmachineinstances/%s: %+v, want verb update", want, sub)
		}
	}
	for i, want := range []string{"guestosinfo", "userlist", "filesystemlist", "vnc", "vnc/screenshot"} {
		if sub := vmi.Subresources[7+i]; sub.Subresource != want || len(sub.Verbs) != 1 || sub.Verbs[0] != "get" {
			t.Errorf("virtualmachineinstances/%s: %+v, want verb get", want, sub)
		}
	}
}

// TestRouterRefusesWhatItDoesNotServe: paths the request-info resolver parsed into something
// other than our subresources and the version are 404s, never a handler.
func TestRouterRefusesWhatItDoesNotServe(t *testing.T) {
	rt := &router{h: &subresources.Handler{}}
	for _, info := range []*request.RequestInfo{
		nil,
		{IsResourceRequest: false, Path: "/apis/subresources.kubevirt.io/v1/x"},
		{IsResourceRequest: true, Namespace: "ns", Resource: "virtualmachines", Name: "vm", Subresource: "addvolume"},
		{IsResourceRequest: true, Namespace: "ns", Resource: "pods", Name: "p", Subresource: "exec"},
		{IsResourceRequest: true, Resource: "virtualmachines", Name: "vm", Subresource: "start"},                  // no namespace
		{IsResourceRequest: true, Namespace: "ns", Resource: "virtualmachines", Name: "vm", Subresource: "pause"}, // KubeVirt has no VM pause
		{IsResourceRequest: true, Resource: "version", Name: "x"},
		{IsResourceRequest: true, Namespace: "ns", Resource: "version"},
		{IsResourceRequest: true, Resource: "expand-vm-spec"},                                               // no namespace
		{IsResourceRequest: true, Namespace: "ns", Resource: "expand-vm-spec", Name: "vm"},                  // not a collection
		{IsResourceRequest: true, Namespace: "ns", Resource: "virtualmachines", Subresource: "expand-spec"}, // no name
	} {
		req := httptest.NewRequest(http.MethodPut, "/apis/subresources.kubevirt.io/v1/whatever", nil)
		if info != nil {
			req = req.WithContext(request.WithRequestInfo(req.Context(), info))
		}
		rec := httptest.NewRecorder()
		rt.ServeHTTP(rec, req)
		if rec.Code != http.StatusNotFound {
			t.Errorf("%+v: %d, want 404", info, rec.Code)
		}
	}
}

// TestRouterServesTheVersion: GET .../v1/version, as the resolver parses it, is the build's
// version document.
func TestRouterServesTheVersion(t *testing.T) {
	rt := &router{h: &subresources.Handler{}}
	req := httptest.NewRequest(http.MethodGet, "/apis/subresources.kubevirt.io/v1/version", nil)
	req = req.WithContext(request.WithRequestInfo(req.Context(), &request.RequestInfo{IsResourceRequest: true, Verb: "list", Resource: "version"}))
	rec := httptest.NewRecorder()
	rt.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"gitVersion":`) || !strings.Contains(rec.Body.String(), `"platform":`) {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
}
