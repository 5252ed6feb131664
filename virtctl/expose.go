package virtctl

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

type exposeOptions struct {
	name, serviceType, protocol string
	port, targetPort            int32
}

func exposeCommand(cl *clientLoader) *cobra.Command {
	o := exposeOptions{}
	cmd := &cobra.Command{
		Use:   "expose (virtualmachine|vm|vmi|vmirs) NAME --name SERVICE --port PORT",
		Short: "Create a Service for a VM, an instance or a replica set",
		Long: "Creates a Service selecting the labels of the instance's launcher pod. It may be created\n" +
			"before the VM starts: it reaches the guest once the instance runs.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := cl.clients()
			if err != nil {
				return err
			}
			selector, err := exposedLabels(cmd.Context(), c, args[0], args[1])
			if err != nil {
				return err
			}
			svc, err := o.service(c.Namespace, selector)
			if err != nil {
				return err
			}
			if _, err := c.Kube.CoreV1().Services(c.Namespace).Create(cmd.Context(), svc, metav1.CreateOptions{}); err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Service %s successfully exposed for %s %s\n", o.name, args[0], args[1])
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.name, "name", "", "the Service's name (required)")
	f.Int32Var(&o.port, "port", 0, "the Service's port (required)")
	f.Int32Var(&o.targetPort, "target-port", 0, "the guest's port (default: --port)")
	f.StringVar(&o.serviceType, "type", string(corev1.ServiceTypeClusterIP), "ClusterIP, NodePort or LoadBalancer")
	f.StringVar(&o.protocol, "protocol", string(corev1.ProtocolTCP), "TCP, UDP or SCTP")
	_ = cmd.MarkFlagRequired("name")
	_ = cmd.MarkFlagRequired("port")
	return cmd
}

// exposedLabels are the labels the launcher pods of the object's instances will carry: the
// template's for a VM (so it works before the VM first starts), the instance's own, or the
// replica set's selector.
func exposedLabels(ctx context.Context, c *clients, kind, name string) (map[string]string, error) {
	var labels map[string]string
	switch strings.ToLower(kind) {
	case "virtualmachine", "virtualmachines", "vm", "vms":
		vm, err := c.Virt.KubevirtV1().VirtualMachines(c.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		if vm.Spec.Template != nil {
			labels = vm.Spec.Template.ObjectMeta.Labels
		}
	case "virtualmachineinstance", "virtualmachineinstances", "vmi", "vmis":
		vmi, err := c.Virt.KubevirtV1().VirtualMachineInstances(c.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		// Its node label is no launcher pod's (and changes when the guest migrates), as in
		// KubeVirt's expose.
		labels = maps.Clone(vmi.Labels)
		delete(labels, v1.NodeNameLabel)
	case "virtualmachineinstancereplicaset", "virtualmachineinstancereplicasets", "vmirs", "vmirss":
		rs, err := c.Virt.KubevirtV1().VirtualMachineInstanceReplicaSets(c.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		if rs.Spec.Selector != nil && len(rs.Spec.Selector.MatchExpressions) == 0 {
			labels = rs.Spec.Selector.MatchLabels
		} else if rs.Spec.Template != nil {
			labels = rs.Spec.Template.ObjectMeta.Labels
		}
	default:
		return nil, fmt.Errorf("cannot expose %q: want virtualmachine (vm), virtualmachineinstance (vmi) or virtualmachineinstancereplicaset (vmirs)", kind)
	}
	if len(labels) == 0 {
		return nil, fmt.Errorf("%s %s has no labels to select its launcher pods by: add labels to its template", kind, name)
	}
	return labels, nil
}

// service renders the Service; the selector also requires kubevirt.io=virt-launcher, so it
// reaches launcher pods only, never another pod that happens to carry the VM's labels.
func (o exposeOptions) service(namespace string, labels map[string]string) (*corev1.Service, error) {
	if o.port <= 0 || o.port > 65535 {
		return nil, fmt.Errorf("--port %d: must be 1-65535", o.port)
	}
	target := o.targetPort
	if target == 0 {
		target = o.port
	}
	if target < 0 || target > 65535 {
		return nil, fmt.Errorf("--target-port %d: must be 1-65535", target)
	}
	typ := corev1.ServiceType(o.serviceType)
	switch typ {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer:
	default:
		return nil, fmt.Errorf("--type %q: want ClusterIP, NodePort or LoadBalancer", o.serviceType)
	}
	selector := maps.Clone(labels)
	selector[v1.AppLabel] = v1.LauncherApp
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: o.name, Namespace: namespace},
		Spec: corev1.ServiceSpec{
			Type:     typ,
			Selector: selector,
			Ports: []corev1.ServicePort{{
				Port: o.port, TargetPort: intstr.FromInt32(target), Protocol: corev1.Protocol(strings.ToUpper(o.protocol)),
			}},
		},
	}, nil
}
