package subresources

import (
	"encoding/json"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vmctl/vmctl/pkg/version"
)

// ServeVersion handles GET version (/apis/subresources.kubevirt.io/v1/version): this build's
// version in KubeVirt's shape, which `virtctl version` prints as the server's. Every
// authenticated user may read it (manifests/kubevirt-roles.yaml, kubevirt.io:default).
func ServeVersion(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		writeStatus(w, apierrors.NewMethodNotSupported(schema.GroupResource{Group: "subresources.kubevirt.io", Resource: "version"}, r.Method))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(version.Get())
}
