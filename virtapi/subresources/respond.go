package subresources

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// writeStatus answers with a metav1.Status, as any Kubernetes API does, so kubectl and
// client-go print the reason. Errors that are not API errors become 500s.
func writeStatus(w http.ResponseWriter, err error) {
	var status metav1.Status
	var apiErr apierrors.APIStatus
	if errors.As(err, &apiErr) {
		status = apiErr.Status()
	} else {
		status = apierrors.NewInternalError(err).ErrStatus
	}
	status.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(status.Code))
	_ = json.NewEncoder(w).Encode(status)
}

// writeAccepted is the answer to a request the controller will carry out: 202, empty body.
func writeAccepted(w http.ResponseWriter) {
	w.WriteHeader(http.StatusAccepted)
}

func mustParse(raw string) *url.URL {
	u, err := url.Parse(raw)
	if err != nil {
		panic(err) // built by the REST client from a valid config
	}
	return u
}
