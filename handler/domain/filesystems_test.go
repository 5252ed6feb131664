package domain

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

func TestFilesystems(t *testing.T) {
	const socket = "/var/run/kubevirt/virtiofs-containers/data.sock"
	for _, tc := range []struct {
		name      string
		hugepages bool
		sockets   map[string]string
		want      []string
		err       string
	}{
		{name: "a filesystem backs the guest's RAM with a shared memfd", sockets: map[string]string{"data": socket}, want: []string{
			`<memoryBacking>
    <source type="memfd"></source>
    <access mode="shared"></access>
  </memoryBacking>`,
			`<filesystem type="mount">
      <driver type="virtiofs" queue="1024"></driver>
      <source socket="` + socket + `"></source>
      <target dir="data"></target>
    </filesystem>`}},
		{name: "huge pages are shared as they are", hugepages: true, sockets: map[string]string{"data": socket}, want: []string{
			`<memoryBacking>
    <hugepages>
      <page size="2048" unit="KiB"></page>
    </hugepages>
    <access mode="shared"></access>
  </memoryBacking>`}},
		{name: "no virtiofsd", err: "spec.domain.devices.filesystems[0].name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vmi := newVMI()
			vmi.Spec.Domain.Devices.Filesystems = []v1.Filesystem{{Name: "data", Virtiofs: &v1.FilesystemVirtiofs{}}}
			vmi.Spec.Volumes = append(vmi.Spec.Volumes, v1.Volume{Name: "data", VolumeSource: v1.VolumeSource{
				PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}})
			if tc.hugepages {
				vmi.Spec.Domain.Resources.Requests["memory"] = resource.MustParse("128Mi")
				vmi.Spec.Domain.Memory = &v1.Memory{Hugepages: &v1.Hugepages{PageSize: "2Mi"}}
			}
			env := launcherEnv(TypeQEMU, vmi)
			delete(env.Volumes, "data")
			env.VirtiofsSockets = tc.sockets
			d, err := Convert(vmi, env)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one naming %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			out, err := Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			roundTrip(t, d, out)
			for _, want := range tc.want {
				if !strings.Contains(string(out), want) {
					t.Errorf("the domain lacks\n%s\nin\n%s", want, out)
				}
			}
		})
	}
}
