package v1

// Labels and annotations the components put on objects, with KubeVirt's names so that
// selectors users already wrote keep working.
const (
	// AppLabel marks the project's pods; launcher pods carry AppLabel=virt-launcher.
	AppLabel = "kubevirt.io"
	// LauncherApp is AppLabel's value on launcher pods.
	LauncherApp = "virt-launcher"
	// CreatedByLabel on a launcher pod is the UID of the instance it runs.
	CreatedByLabel = "kubevirt.io/created-by"
	// SchedulableLabel marks nodes whose handler is ready to run instances: virt-handler sets
	// it to "true" with every heartbeat, virt-controller to "false" once the heartbeat is stale.
	// Launcher pods select nodes where it is "true".
	SchedulableLabel = "kubevirt.io/schedulable"
	// NodeNameLabel on an instance is its node, as status.nodeName says (KubeVirt's label:
	// `kubectl get vmi -l kubevirt.io/nodeName=NODE`). virt-controller writes both at once.
	NodeNameLabel = "kubevirt.io/nodeName"
	// HeartbeatAnnotation on a node is the time (RFC 3339) of its virt-handler's last heartbeat.
	HeartbeatAnnotation = "kubevirt.io/heartbeat"
)

// VirtualMachineInstanceFinalizer holds an instance in the API until its launcher pod is gone,
// so that a VirtualMachine never starts a new instance while the old one may still run.
const VirtualMachineInstanceFinalizer = "foregroundDeleteVirtualMachine"

// NodeNameField selects instances by the node they were scheduled to (a selectable field of
// the CRD): node agents watch their own with it.
//
//	kubectl get vmi --field-selector status.nodeName=NODE
const NodeNameField = "status.nodeName"

// MigrationTargetNodeField selects instances migrating to a node (a selectable field of the
// CRD): the target's node agent prepares the incoming domain of those.
const MigrationTargetNodeField = "status.migrationState.targetNode"
