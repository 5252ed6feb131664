package domain

import (
	"strings"
	"testing"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// A block-mode claim is a block device in the launcher pod: the domain's disk is
// type="block" on it; an ephemeral volume needs a file for its overlay, so not on one.
func TestBlockDevices(t *testing.T) {
	for _, tc := range []struct {
		name    string
		source  v1.VolumeSource
		wantErr string
	}{
		{name: "a claim", source: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}},
		{name: "an ephemeral claim", source: v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}},
			wantErr: "spec.volumes[1].ephemeral: Invalid value: \"data\": the claim is block-mode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vmi := newVMI()
			vmi.Spec.Domain.Devices.Disks = append(vmi.Spec.Domain.Devices.Disks, v1.Disk{Name: "data"})
			vmi.Spec.Volumes = append(vmi.Spec.Volumes, v1.Volume{Name: "data", VolumeSource: tc.source})
			v1.SetDefaults_VirtualMachineInstanceSpec(&vmi.Spec)
			env := launcherEnv(TypeQEMU, vmi)
			env.Volumes["data"] = HostDisk{Path: "/dev/vmi-disks/data", Format: "raw", Block: true}
			d, err := Convert(vmi, env)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v; want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			disk := d.Devices.Disks[1]
			if disk.Source == nil || disk.Source.Block == nil || disk.Source.Block.Dev != "/dev/vmi-disks/data" || disk.Source.File != nil {
				t.Fatalf("disk source %+v, want the block device", disk.Source)
			}
			out, err := Marshal(d)
			if err != nil || !strings.Contains(string(out), `<disk type="block" device="disk">`) {
				t.Fatalf("domain XML (err %v) has no block disk:\n%s", err, out)
			}
		})
	}
}
