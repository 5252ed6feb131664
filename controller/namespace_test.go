package controller

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestNamespaceTerminating(t *testing.T) {
	terminating := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "p", errors.New("namespace ns is being terminated"))
	terminating.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: corev1.NamespaceTerminatingCause}}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"the namespace is being deleted", terminating, true},
		{"another refusal", apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "p", errors.New("quota")), false},
		{"no error", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NamespaceTerminating(tt.err); got != tt.want {
				t.Errorf("NamespaceTerminating(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}
