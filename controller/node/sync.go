package node

import (
	"context"
	"encoding/json"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// ReasonNodeUnresponsive is the event on a node whose handler stopped beating.
const ReasonNodeUnresponsive = "NodeUnresponsive"

// sync withdraws the schedulable label from a node whose last heartbeat is older than the
// timeout, or checks it again when that moment comes. Nodes that never had a heartbeat are
// not the project's to judge (kwok's simulated nodes carry a static label).
func (c *Controller) sync(ctx context.Context, key string) error {
	node, err := c.nodeLister.Get(key)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	beat, ok := node.Annotations[v1.HeartbeatAnnotation]
	if !ok || node.Labels[v1.SchedulableLabel] != "true" {
		return nil
	}
	last, err := time.Parse(time.RFC3339, beat)
	if err != nil {
		// Not a time the handler wrote: treat the node as having no heartbeat at all.
		last = time.Time{}
	}
	if left := c.timeout - c.clock.Since(last); left > 0 {
		c.queue.AddAfter(key, left+time.Second)
		return nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"labels": map[string]string{v1.SchedulableLabel: "false"},
		// The precondition: a heartbeat that arrived since the cache was read wins.
		"resourceVersion": node.ResourceVersion,
	}})
	if err != nil {
		return err
	}
	_, err = c.kube.CoreV1().Nodes().Patch(ctx, node.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return err
	}
	c.recorder.Eventf(node, corev1.EventTypeWarning, ReasonNodeUnresponsive,
		"virt-handler's last heartbeat was at %s: no new instances are placed on this node until it beats again", beat)
	return nil
}
