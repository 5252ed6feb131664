package server

import (
	"encoding/json"
	"net/http"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapiserver "k8s.io/apiserver/pkg/server"
)

const (
	// Group and Version are KubeVirt's subresource API, registered by the APIService
	// v1.subresources.kubevirt.io.
	Group   = "subresources.kubevirt.io"
	Version = "v1"

	groupPath        = "/apis/" + Group
	groupVersionPath = groupPath + "/" + Version
)

// resources is the discovery document: the parents carry no verbs (they are kubevirt.io's
// objects), the subresources carry the verbs RBAC grants on them.
var resources = []metav1.APIResource{
	{Name: "virtualmachines", Namespaced: true, Kind: "VirtualMachine", Verbs: metav1.Verbs{}},
	{Name: "virtualmachines/start", Namespaced: true, Kind: "VirtualMachine", Verbs: metav1.Verbs{"update"}},
	{Name: "virtualmachines/stop", Namespaced: true, Kind: "VirtualMachine", Verbs: metav1.Verbs{"update"}},
	{Name: "virtualmachines/restart", Namespaced: true, Kind: "VirtualMachine", Verbs: metav1.Verbs{"update"}},
	{Name: "virtualmachines/migrate", Namespaced: true, Kind: "VirtualMachine", Verbs: metav1.Verbs{"update"}},
	{Name: "virtualmachines/portforward", Namespaced: true, Kind: "VirtualMachine", Verbs: metav1.Verbs{"get"}},
	{Name: "virtualmachines/expand-spec", Namespaced: true, Kind: "VirtualMachine", Verbs: metav1.Verbs{"get"}},
	{Name: "expand-vm-spec", Namespaced: true, Kind: "VirtualMachine", Verbs: metav1.Verbs{"update"}},
	{Name: "virtualmachineinstances", Namespaced: true, Kind: "VirtualMachineInstance", Verbs: metav1.Verbs{}},
	{Name: "virtualmachineinstances/console", Namespaced: true, Kind: "VirtualMachineInstance", Verbs: metav1.Verbs{"get"}},
	{Name: "virtualmachineinstances/pause", Namespaced: true, Kind: "VirtualMachineInstance", Verbs: metav1.Verbs{"update"}},
	{Name: "virtualmachineinstances/unpause", Namespaced: true, Kind: "VirtualMachineInstance", Verbs: metav1.Verbs{"update"}},
	{Name: "virtualmachineinstances/softreboot", Namespaced: true, Kind: "VirtualMachineInstance", Verbs: metav1.Verbs{"update"}},
	{Name: "virtualmachineinstances/freeze", Namespaced: true, Kind: "VirtualMachineInstance", Verbs: metav1.Verbs{"update"}},
	{Name: "virtualmachineinstances/unfreeze", Namespaced: true, Kind: "VirtualMachineInstance", Verbs: metav1.Verbs{"update"}},
	{Name: "virtualmachineinstances/portforward", Namespaced: true, Kind: "VirtualMachineInstance", Verbs: metav1.Verbs{"get"}},
	{Name: "virtualmachineinstances/guestosinfo", Namespaced: true, Kind: "VirtualMachineInstance", Verbs: metav1.Verbs{"get"}},
	{Name: "virtualmachineinstances/userlist", Namespaced: true, Kind: "VirtualMachineInstance", Verbs: metav1.Verbs{"get"}},
	{Name: "virtualmachineinstances/filesystemlist", Namespaced: true, Kind: "VirtualMachineInstance", Verbs: metav1.Verbs{"get"}},
	{Name: "virtualmachineinstances/vnc", Namespaced: true, Kind: "VirtualMachineInstance", Verbs: metav1.Verbs{"get"}},
	{Name: "virtualmachineinstances/vnc/screenshot", Namespaced: true, Kind: "VirtualMachineInstance", Verbs: metav1.Verbs{"get"}},
}

// installDiscovery makes the group visible in /apis (both the legacy and the aggregated
// form, which the kube-aggregator prefers) and serves /apis/GROUP and /apis/GROUP/VERSION,
// the path the aggregator probes to mark the APIService Available.
func installDiscovery(s *genericapiserver.GenericAPIServer) {
	gv := metav1.GroupVersionForDiscovery{GroupVersion: Group + "/" + Version, Version: Version}
	group := metav1.APIGroup{
		TypeMeta:         metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"},
		Name:             Group,
		Versions:         []metav1.GroupVersionForDiscovery{gv},
		PreferredVersion: gv,
	}
	s.DiscoveryGroupManager.AddGroup(group)
	s.AggregatedDiscoveryGroupManager.AddGroupVersion(Group, aggregatedVersion())
	s.Handler.NonGoRestfulMux.Handle(groupPath, jsonHandler(group))
	s.Handler.NonGoRestfulMux.Handle(groupVersionPath, jsonHandler(metav1.APIResourceList{
		TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
		GroupVersion: Group + "/" + Version,
		APIResources: resources,
	}))
}

func aggregatedVersion() apidiscoveryv2.APIVersionDiscovery {
	parents := map[string]*apidiscoveryv2.APIResourceDiscovery{}
	var order []string
	for _, r := range resources {
		parent, sub, isSub := cut(r.Name)
		if !isSub {
			parents[parent] = &apidiscoveryv2.APIResourceDiscovery{
				Resource: parent, Scope: apidiscoveryv2.ScopeNamespace, Verbs: append([]string{}, r.Verbs...),
				ResponseKind: &metav1.GroupVersionKind{Group: "kubevirt.io", Version: "v1", Kind: r.Kind},
			}
			order = append(order, parent)
			continue
		}
		parents[parent].Subresources = append(parents[parent].Subresources, apidiscoveryv2.APISubresourceDiscovery{
			Subresource: sub, Verbs: r.Verbs,
			ResponseKind: &metav1.GroupVersionKind{Group: "kubevirt.io", Version: "v1", Kind: r.Kind},
		})
	}
	v := apidiscoveryv2.APIVersionDiscovery{Version: Version, Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent}
	for _, name := range order {
		v.Resources = append(v.Resources, *parents[name])
	}
	return v
}

func cut(name string) (parent, sub string, isSub bool) {
	for i := range name {
		if name[i] == '/' {
			return name[:i], name[i+1:], true
		}
	}
	return name, "", false
}

func jsonHandler(v any) http.Handler {
	body, err := json.Marshal(v)
	if err != nil {
		panic(err) // static documents
	}
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})
}
