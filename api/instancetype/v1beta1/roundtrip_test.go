package v1beta1

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/yaml"
)

// TestKubeVirtManifestsDecode: manifests written for KubeVirt (every field name spelled as
// KubeVirt spells it) decode strictly, nothing unknown, and encode back to the same JSON.
func TestKubeVirtManifestsDecode(t *testing.T) {
	for name, tc := range map[string]struct {
		doc  string
		into any
	}{
		"instance type": {`apiVersion: instancetype.kubevirt.io/v1beta1
kind: VirtualMachineInstancetype
metadata: {name: big}
spec:
  nodeSelector: {zone: a}
  schedulerName: sched
  annotations: {a: b}
  ioThreadsPolicy: shared
  cpu: {guest: 4, model: host-model, dedicatedCPUPlacement: true, isolateEmulatorThread: true, maxSockets: 8}
  memory: {guest: 8Gi, hugepages: {pageSize: 2Mi}, overcommitPercent: 10, maxGuest: 16Gi}
`, &VirtualMachineInstancetype{}},
		"preference": {`apiVersion: instancetype.kubevirt.io/v1beta1
kind: VirtualMachineClusterPreference
metadata: {name: fedora}
spec:
  clock: {preferredClockOffset: {utc: {}}, preferredTimer: {rtc: {tickPolicy: catchup}}}
  cpu: {preferredCPUTopology: spread, spreadOptions: {across: SocketsCores, ratio: 4}, preferredCPUFeatures: [{name: vmx, policy: require}]}
  devices:
    preferredAutoattachGraphicsDevice: false
    preferredAutoattachMemBalloon: false
    preferredAutoattachPodInterface: true
    preferredAutoattachSerialConsole: true
    preferredAutoattachInputDevice: false
    preferredDisableHotplug: true
    preferredSoundModel: ich9
    preferredUseVirtioTransitional: false
    preferredInputBus: virtio
    preferredInputType: tablet
    preferredDiskBus: virtio
    preferredLunBus: scsi
    preferredCdromBus: sata
    preferredDiskDedicatedIoThread: true
    preferredDiskCache: none
    preferredDiskIO: native
    preferredDiskBlockSize: {custom: {logical: 512, physical: 4096}}
    preferredInterfaceModel: virtio
    preferredRng: {}
    preferredBlockMultiQueue: true
    preferredNetworkInterfaceMultiQueue: true
    preferredTPM: {}
    preferredInterfaceMasquerade: {}
    preferredVideoType: virtio
  features: {preferredAcpi: {}, preferredApic: {endOfInterrupt: true}, preferredKvm: {hidden: true}, preferredPvspinlock: {enabled: true}, preferredSmm: {}}
  firmware: {preferredUseBios: false, preferredUseBiosSerial: true, preferredUseEfi: true, preferredUseSecureBoot: true, preferredEfi: {secureBoot: true, persistent: true}}
  machine: {preferredMachineType: q35}
  volumes: {preferredStorageClassName: local}
  preferredSubdomain: sub
  preferredTerminationGracePeriodSeconds: 5
  preferSpreadSocketToCoreRatio: 2
  preferredArchitecture: amd64
  annotations: {a: b}
  requirements: {cpu: {guest: 1}, memory: {guest: 2Gi}, architecture: amd64}
`, &VirtualMachineClusterPreference{}},
	} {
		t.Run(name, func(t *testing.T) {
			if err := yaml.UnmarshalStrict([]byte(tc.doc), tc.into); err != nil {
				t.Fatalf("a KubeVirt manifest does not decode: %v", err)
			}
			want, _ := yaml.YAMLToJSON([]byte(tc.doc))
			got, err := json.Marshal(tc.into)
			if err != nil {
				t.Fatal(err)
			}
			var a, b any
			_ = json.Unmarshal(want, &a)
			_ = json.Unmarshal(got, &b)
			if !equality.Semantic.DeepEqual(a, b) {
				t.Errorf("round trip changed it:\n got %s\nwant %s", got, want)
			}
		})
	}
}
