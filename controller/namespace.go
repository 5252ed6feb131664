package controller

import (
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// NamespaceTerminating says err is the API server refusing a create because the namespace is
// being deleted. Nothing can be created there any more and everything in it is going, so a
// controller neither records nor retries it, as the ReplicaSet controller does: retrying each
// object's create with an event apiece would slow the namespace's deletion down.
func NamespaceTerminating(err error) bool {
	return err != nil && apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause)
}
