package webhook

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
)

func TestReviewRoundTrip(t *testing.T) {
	body := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"abc","operation":"CREATE",
"resource":{"group":"kubevirt.io","version":"v1","resource":"virtualmachineinstances"},"name":"x",
"object":{"metadata":{"name":"x"},"spec":{"domain":{"devices":{}}}}}}`
	rec := httptest.NewRecorder()
	Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/validate-virtualmachineinstances", bytes.NewBufferString(body)))
	var out admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if out.Kind != "AdmissionReview" || out.Response == nil || out.Response.UID != "abc" || out.Response.Allowed {
		t.Fatalf("response %s", rec.Body.String())
	}
	rec = httptest.NewRecorder()
	Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/mutate-virtualmachineinstances", bytes.NewBufferString("{")))
	if rec.Code != http.StatusBadRequest {
		t.Fatalf("garbage: %d", rec.Code)
	}
}
