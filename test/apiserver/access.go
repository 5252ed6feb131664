package apiserver

import (
	"context"
	"fmt"
	"strings"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/client-go/kubernetes"
)

// ServiceAccountGroups are the groups a service account of namespace authenticates with.
func ServiceAccountGroups(namespace string) []string {
	return append(serviceaccount.MakeGroupNames(namespace), "system:authenticated")
}

// Allowed asks the authorizer (a SubjectAccessReview) whether user, in groups, may do what
// attrs say.
func Allowed(ctx context.Context, client kubernetes.Interface, user string, groups []string, attrs authorizationv1.ResourceAttributes) (bool, error) {
	review, err := client.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{User: user, Groups: groups, ResourceAttributes: &attrs},
	}, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("SubjectAccessReview: %w", err)
	}
	return review.Status.Allowed, nil
}

// WaitAllowed waits, for at most 30 s, until the authorizer allows user what attrs say: the
// RBAC authorizer learns new roles and bindings from its informers, a moment after their
// creation, and a request in between is Forbidden.
func WaitAllowed(ctx context.Context, client kubernetes.Interface, user string, groups []string, attrs authorizationv1.ResourceAttributes) error {
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		return Allowed(ctx, client, user, groups, attrs)
	})
	if err != nil {
		return fmt.Errorf("waiting for RBAC to allow %s to %s %s/%s in %q: %w", user, attrs.Verb, attrs.Group, attrs.Resource, attrs.Namespace, err)
	}
	return nil
}

// UntilRefused calls try until its error says want, for at most 30 s, and returns the last
// error. The apiserver loads new RBAC bindings, admission policies and webhook configurations
// in the background, each kind on its own, so the first answers may be allowed, or refused by
// something other than what a test is after.
func UntilRefused(ctx context.Context, want string, try func() error) error {
	var err error
	_ = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		err = try()
		return err != nil && strings.Contains(err.Error(), want), nil
	})
	return err
}
