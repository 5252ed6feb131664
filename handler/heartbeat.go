package handler

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// DefaultHeartbeatInterval is how often virt-handler says it lives: a quarter of
// virt-controller's default timeout, so three missed beats are forgiven.
const DefaultHeartbeatInterval = 10 * time.Second

// Heartbeat tells the cluster that this node's handler lives and can take instances, as
// KubeVirt's does: every Interval it patches its Node with v1.HeartbeatAnnotation (now) and
// v1.SchedulableLabel ("true" while Ready passes, "false" if it stops). Launcher pods select
// schedulable nodes, so instances are placed only where a handler runs; virt-controller takes
// the label away when the beats stop. The handler's rights on nodes are this patch, on its
// own node only (manifests/virt-handler-node-restriction.yaml).
type Heartbeat struct {
	Nodes    typedcorev1.NodeInterface
	NodeName string
	Interval time.Duration
	Ready    func() error
	Clock    clock.PassiveClock
}

// Run beats until ctx ends: first as soon as the handler is ready (so a new node takes
// instances without waiting an interval), then every Interval. A handler that never gets
// ready never beats: during a rollout the label its predecessor set stands until the timeout.
// A failed beat is logged and retried at the next one: the timeout on the other side is made
// for the API server being away a while.
func (h *Heartbeat) Run(ctx context.Context) error {
	_ = wait.PollUntilContextCancel(ctx, time.Second, true, func(context.Context) (bool, error) { return h.Ready() == nil, nil })
	wait.JitterUntilWithContext(ctx, func(ctx context.Context) {
		if err := h.Beat(ctx); err != nil {
			klog.FromContext(ctx).Error(err, "heartbeat", "node", h.NodeName)
		}
	}, h.Interval, 0.1, true)
	return nil
}

// Beat writes one heartbeat.
func (h *Heartbeat) Beat(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, h.Interval)
	defer cancel()
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"labels":      map[string]string{v1.SchedulableLabel: strconv.FormatBool(h.Ready() == nil)},
		"annotations": map[string]string{v1.HeartbeatAnnotation: h.Clock.Now().UTC().Format(time.RFC3339)},
	}})
	if err != nil {
		return err
	}
	_, err = h.Nodes.Patch(ctx, h.NodeName, types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}
