// Package deviceplugin offers host device nodes such as /dev/kvm and /dev/net/tun to pods as
// Kubernetes extended resources (devices.kubevirt.io/kvm, devices.kubevirt.io/tun), the way
// KubeVirt's virt-handler does, so that unprivileged launcher pods get them without hostPath
// volumes or privileges.
//
// virt-handler runs one device plugin (k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1, gRPC over
// a unix socket) per device in the kubelet's device-plugins directory and registers it with the
// kubelet (register.go). A plugin advertises Count interchangeable device IDs that all stand for
// the same node, so that many pods can hold the device at once; their health follows whether the
// host node exists (plugin.go). The kubelet deletes every plugin socket in that directory when it
// starts, and forgets its plugins, so each plugin polls its own socket and, once it is gone,
// serves on a new one and registers again (run.go, socket.go).
package deviceplugin
