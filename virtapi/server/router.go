package server

import (
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/endpoints/request"

	"github.com/vmctl/vmctl/pkg/handlerapi"
	"github.com/vmctl/vmctl/virtapi/subresources"
)

// router sends a request under /apis/subresources.kubevirt.io/v1/ to its handler. It reads
// the RequestInfo the apiserver's filters parsed (and authorized) rather than parsing the
// path a second time, so what runs is always what RBAC allowed.
type router struct{ h *subresources.Handler }

func (rt *router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	info, ok := request.RequestInfoFrom(r.Context())
	if ok && isVersion(info) {
		subresources.ServeVersion(w, r)
		return
	}
	if ok && info.IsResourceRequest && info.Resource == "expand-vm-spec" && info.Namespace != "" && info.Name == "" && info.Subresource == "" {
		rt.h.ServeExpandSpec(w, r, info.Namespace)
		return
	}
	if !ok || !info.IsResourceRequest || info.Namespace == "" || info.Name == "" {
		http.NotFound(w, r)
		return
	}
	switch info.Resource + "/" + info.Subresource {
	case "virtualmachines/start":
		rt.h.ServeVM(w, r, info.Namespace, info.Name, subresources.Start)
	case "virtualmachines/stop":
		rt.h.ServeVM(w, r, info.Namespace, info.Name, subresources.Stop)
	case "virtualmachines/restart":
		rt.h.ServeVM(w, r, info.Namespace, info.Name, subresources.Restart)
	case "virtualmachines/expand-spec":
		rt.h.ServeExpandVM(w, r, info.Namespace, info.Name)
	case "virtualmachines/migrate":
		rt.h.ServeMigrate(w, r, info.Namespace, info.Name)
	case "virtualmachineinstances/pause":
		rt.h.ServeInstance(w, r, info.Namespace, info.Name, handlerapi.Pause)
	case "virtualmachineinstances/unpause":
		rt.h.ServeInstance(w, r, info.Namespace, info.Name, handlerapi.Unpause)
	case "virtualmachineinstances/softreboot":
		rt.h.ServeInstance(w, r, info.Namespace, info.Name, handlerapi.SoftReboot)
	case "virtualmachineinstances/freeze":
		rt.h.ServeInstance(w, r, info.Namespace, info.Name, handlerapi.Freeze)
	case "virtualmachineinstances/unfreeze":
		rt.h.ServeInstance(w, r, info.Namespace, info.Name, handlerapi.Unfreeze)
	case "virtualmachineinstances/guestosinfo":
		rt.h.ServeGuestQuery(w, r, info.Namespace, info.Name, handlerapi.GuestOSInfo)
	case "virtualmachineinstances/userlist":
		rt.h.ServeGuestQuery(w, r, info.Namespace, info.Name, handlerapi.UserList)
	case "virtualmachineinstances/filesystemlist":
		rt.h.ServeGuestQuery(w, r, info.Namespace, info.Name, handlerapi.FileSystemList)
	case "virtualmachineinstances/console":
		rt.h.ServeConsole(w, r, info.Namespace, info.Name)
	case "virtualmachineinstances/vnc":
		// Parts is resource, name, vnc, then screenshot for the display's image.
		switch extra := info.Parts[3:]; {
		case len(extra) == 0:
			rt.h.ServeVNC(w, r, info.Namespace, info.Name, false)
		case len(extra) == 1 && extra[0] == "screenshot":
			rt.h.ServeVNC(w, r, info.Namespace, info.Name, true)
		default:
			http.Error(w, apierrors.NewNotFound(subresourceGR(info.Resource), info.Name).Error(), http.StatusNotFound)
		}
	case "virtualmachineinstances/portforward", "virtualmachines/portforward":
		// Parts is resource, name, portforward, then the port and the protocol.
		rt.h.ServePortForward(w, r, info.Resource, info.Namespace, info.Name, info.Parts[3:])
	default:
		err := apierrors.NewNotFound(subresourceGR(info.Resource), info.Name)
		http.Error(w, err.Error(), http.StatusNotFound)
	}
}

// isVersion is GET /apis/subresources.kubevirt.io/v1/version, which the resolver parses as a
// list of the cluster-scoped resource "version" (so RBAC grants it as such).
func isVersion(info *request.RequestInfo) bool {
	return info.IsResourceRequest && info.Resource == "version" && info.Namespace == "" && info.Name == "" && info.Subresource == ""
}

func subresourceGR(resource string) schema.GroupResource {
	return schema.GroupResource{Group: Group, Resource: resource}
}
