// Package downwardmetrics gives a guest the metrics KubeVirt's downwardMetrics show it: the
// node's and its own, in the XML of vhostmd (the Virtual Host Metrics Daemon), which guest
// tools such as vm-dump-metrics read. Two ways in, as KubeVirt has them:
//
//   - the volume (spec.volumes[].downwardMetrics): a small raw disk in vhostmd's layout,
//     rewritten every few seconds (disk.go);
//   - the device (spec.domain.devices.downwardMetrics): the virtio-serial port
//     org.github.vhostmd.1, where the guest asks "GET /metrics/XML" and gets the document
//     (channel.go).
//
// virt-launcher serves both for its own domain, not virt-handler: a guest that floods its
// port costs only its own pod, never the node's shared agent.
package downwardmetrics
