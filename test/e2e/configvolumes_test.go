//go:build e2e

package e2e

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/test/e2e/framework"
)

// TestConfigVolumesReachTheGuest: a ConfigMap, a Secret and a Windows answer file (a sysprep
// volume) each reach the guest as a disk of their files, labelled as KubeVirt labels them (the
// volume's name, or volumeLabel; unattendCD for sysprep). The guest mounts every ISO 9660 disk
// it has and lists labels and files at /cgi-bin/isofiles.
func TestConfigVolumesReachTheGuest(t *testing.T) {
	f := framework.New(t)
	f.CreateObjects(
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app"}, Data: map[string]string{"app.conf": "port=80"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds"}, StringData: map[string]string{"password": "s3cret"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "answers"}, Data: map[string]string{"autounattend.xml": "<unattend/>"}},
	)
	spec := framework.TestGuestSpec("config")
	volumes := []v1.Volume{
		{Name: "app", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{Name: "app"}}},
		{Name: "creds", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "creds", VolumeLabel: "CREDS"}}},
		{Name: "sysprep", VolumeSource: v1.VolumeSource{Sysprep: &v1.SysprepSource{ConfigMap: &corev1.LocalObjectReference{Name: "answers"}}}},
	}
	for _, vol := range volumes {
		// The guest's kernel has no SATA driver: virtio disks, and the answer file on a SCSI CD-ROM.
		disk := v1.Disk{Name: vol.Name, DiskDevice: v1.DiskDevice{Disk: &v1.DiskTarget{Bus: v1.DiskBusVirtio}}}
		if vol.Sysprep != nil {
			disk.DiskDevice = v1.DiskDevice{CDRom: &v1.CDRomTarget{Bus: v1.DiskBusSCSI}}
		}
		spec.Domain.Devices.Disks = append(spec.Domain.Devices.Disks, disk)
		spec.Volumes = append(spec.Volumes, vol)
	}
	f.CreateVMI(&v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "config"}, Spec: spec})
	vmi := f.WaitVMIPhase("config", v1.Running, 3*time.Minute)

	listed := guestCGI(t, f, vmi, "isofiles")
	for label, file := range map[string]string{"app": "app.conf=port=80", "CREDS": "password=s3cret", "unattendCD": "autounattend.xml=<unattend/>"} {
		dev, _, _ := strings.Cut(lineWith(listed, " label="+label), " ")
		if dev == "" || lineWith(listed, dev+" "+file) == "" {
			t.Errorf("the guest has no disk labelled %s holding %s:\n%s", label, file, listed)
		}
	}
}
