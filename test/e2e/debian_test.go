//go:build e2e

package e2e

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/test/e2e/framework"
)

// The project's Debian 12 cloud image (hack/images/debian-guest): its default user is
// debian, and a full boot with cloud-init takes about 40 s under TCG here.
const (
	debianImage   = "vmctl/debian-guest:devel"
	debianUser    = "debian"
	debianBoot    = 6 * time.Minute
	cloudInitDone = "VMCTL-CLOUD-INIT-DONE"
)

// userData writes a marker on the serial console once cloud-init ran the user's commands.
const userData = "#cloud-config\nruncmd:\n  - echo " + cloudInitDone + " > /dev/ttyS0\n"

// guestMAC is fixed, so network data can match the guest's NIC whatever the kernel names it.
const guestMAC = "02:00:00:0a:00:02"

// TestADebianCloudImageBootsWithCloudInit is what a KubeVirt user does with a cloud image:
// boot it from a containerDisk, by BIOS and by UEFI, configure it with cloud-init (inline and
// from Secrets, NoCloud and ConfigDrive, static network data), then get in: the login prompt on
// the console, ssh with the key from accessCredentials, scp both ways.
func TestADebianCloudImageBootsWithCloudInit(t *testing.T) {
	f := framework.New(t)
	key := sshKey(t, f, "ssh-keys")

	// BIOS, NoCloud inline: user data and a static address beside the one the launcher leases.
	bios := debianVMI("deb-bios", &v1.Bootloader{BIOS: &v1.BIOS{}}, v1.VolumeSource{CloudInitNoCloud: &v1.CloudInitNoCloudSource{
		UserData: userData,
		NetworkData: "version: 2\nethernets:\n  nic0:\n    match: {macaddress: \"" + guestMAC + "\"}\n" +
			"    addresses: [10.0.2.2/24, 192.168.77.7/24]\n    gateway4: 10.0.2.1\n    nameservers: {addresses: [10.0.0.10]}\n",
	}}, "noCloud")
	// UEFI, ConfigDrive from Secrets: OpenStack's network_data.json with two static networks.
	f.CreateObjects(
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "user-data"}, StringData: map[string]string{"userdata": userData}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "network-data"}, StringData: map[string]string{"networkdata": `{` +
			`"links":[{"id":"nic0","type":"phy","ethernet_mac_address":"` + guestMAC + `"}],` +
			`"networks":[{"id":"lan","link":"nic0","type":"ipv4","ip_address":"10.0.2.2","netmask":"255.255.255.0","gateway":"10.0.2.1"},` +
			`{"id":"extra","link":"nic0","type":"ipv4","ip_address":"192.168.78.8","netmask":"255.255.255.0"}],` +
			`"services":[{"type":"dns","address":"10.0.0.10"}]}`}})
	efi := debianVMI("deb-efi", &v1.Bootloader{EFI: &v1.EFI{SecureBoot: ptr.To(false)}}, v1.VolumeSource{CloudInitConfigDrive: &v1.CloudInitConfigDriveSource{
		UserDataSecretRef:    &corev1.LocalObjectReference{Name: "user-data"},
		NetworkDataSecretRef: &corev1.LocalObjectReference{Name: "network-data"},
	}}, "configDrive")
	for _, vmi := range []*v1.VirtualMachineInstance{bios, efi} {
		if _, err := f.Virt.KubevirtV1().VirtualMachineInstances(f.Namespace).Create(f.Context(), vmi, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	for name, staticIP := range map[string]string{"deb-bios": "192.168.77.7/24", "deb-efi": "192.168.78.8/24"} {
		console := f.FollowConsole(f.LauncherPod(f.WaitVMIPhase(name, v1.Running, 3*time.Minute)))
		f.WaitConsole(console, cloudInitDone, debianBoot)
		f.WaitConsole(console, name+" login:", time.Minute)

		if out := guestSSH(t, f, key, name, "hostname"); strings.TrimSpace(out) != name {
			t.Errorf("%s: hostname over ssh is %q", name, out)
		}
		if out := guestSSH(t, f, key, name, "ip -4 addr"); !strings.Contains(out, staticIP) {
			t.Errorf("%s: the static network data's %s is not applied:\n%s", name, staticIP, out)
		}
	}

	// scp there and back.
	dir := t.TempDir()
	sent, back := filepath.Join(dir, "sent"), filepath.Join(dir, "back")
	if err := os.WriteFile(sent, []byte("from the test\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	virtctl(t, f, "scp", "-i", key.identity, "--known-hosts", key.knownHosts, sent, debianUser+"@vmi/deb-bios:/tmp/copied")
	virtctl(t, f, "scp", "-i", key.identity, "--known-hosts", key.knownHosts, debianUser+"@vmi/deb-bios:/tmp/copied", back)
	if got, err := os.ReadFile(back); err != nil || string(got) != "from the test\n" {
		t.Errorf("scp round trip gave %q, %v", got, err)
	}

	// virtctl console shows the login prompt.
	c := f.StartConsole("deb-efi")
	defer c.Close()
	f.Eventually(time.Minute, "a login prompt on virtctl console", func(_ context.Context) (bool, error) {
		_ = c.Send("\r")
		return strings.Contains(c.Output(), "login:"), nil
	})
}

// debianVMI boots the Debian image with 512 MiB, the given firmware and cloud-init volume, and
// the ssh-keys Secret propagated through that volume's kind.
var virtio = v1.DiskDevice{Disk: &v1.DiskTarget{Bus: v1.DiskBusVirtio}}

func debianVMI(name string, bootloader *v1.Bootloader, cloudInit v1.VolumeSource, propagation string) *v1.VirtualMachineInstance {
	spec := v1.VirtualMachineInstanceSpec{
		TerminationGracePeriodSeconds: ptr.To[int64](5),
		Domain: v1.DomainSpec{
			Resources: v1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")}},
			Firmware:  &v1.Firmware{Bootloader: bootloader},
			Devices: v1.Devices{
				// virtio, as KubeVirt's guides write it: Debian's cloud kernel has no SATA
				// (AHCI) driver, and SATA is the default bus.
				Disks: []v1.Disk{{Name: "root", BootOrder: ptr.To[uint](1), DiskDevice: virtio},
					{Name: "cloudinit", DiskDevice: virtio}},
				Interfaces: []v1.Interface{{Name: "default", MacAddress: guestMAC, InterfaceBindingMethod: v1.InterfaceBindingMethod{Masquerade: &v1.InterfaceMasquerade{}}}},
			},
		},
		Networks: []v1.Network{{Name: "default", NetworkSource: v1.NetworkSource{Pod: &v1.PodNetwork{}}}},
		Volumes: []v1.Volume{
			{Name: "root", VolumeSource: v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: debianImage}}},
			{Name: "cloudinit", VolumeSource: cloudInit},
		},
	}
	method := v1.SSHPublicKeyAccessCredentialPropagationMethod{NoCloud: &v1.NoCloudSSHPublicKeyAccessCredentialPropagation{}}
	if propagation == "configDrive" {
		method = v1.SSHPublicKeyAccessCredentialPropagationMethod{ConfigDrive: &v1.ConfigDriveSSHPublicKeyAccessCredentialPropagation{}}
	}
	spec.AccessCredentials = []v1.AccessCredential{{SSHPublicKey: &v1.SSHPublicKeyAccessCredential{
		Source:            v1.SSHPublicKeyAccessCredentialSource{Secret: &v1.AccessCredentialSecretSource{SecretName: "ssh-keys"}},
		PropagationMethod: method,
	}}}
	return &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}
}

// testKey is an ssh identity file and the known-hosts file virtctl keeps for it.
type testKey struct{ identity, knownHosts string }

// sshKey makes an ed25519 key, stores its public half in the Secret secretName (as a user
// would: kubectl create secret generic --from-file=key=id_ed25519.pub) and its private half
// in a file.
func sshKey(t *testing.T, f *framework.Framework, secretName string) testKey {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "e2e")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	k := testKey{identity: filepath.Join(dir, "id_ed25519"), knownHosts: filepath.Join(dir, "known_hosts")}
	if err := os.WriteFile(k.identity, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	f.CreateObjects(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secretName},
		StringData: map[string]string{"key": string(ssh.MarshalAuthorizedKey(sshPub))}})
	return k
}

// guestSSH runs command in the instance name over `virtctl ssh`, retrying while sshd starts.
func guestSSH(t *testing.T, f *framework.Framework, k testKey, name, command string) string {
	t.Helper()
	var out string
	f.Eventually(debianBoot, "ssh to "+name, func(_ context.Context) (bool, error) {
		var err error
		out, err = f.VirtctlStdout("ssh", "-i", k.identity, "--known-hosts", k.knownHosts, "-c", command, debianUser+"@vmi/"+name)
		return err == nil, nil
	})
	return out
}

// virtctl runs a virtctl command that must succeed.
func virtctl(t *testing.T, f *framework.Framework, args ...string) string {
	t.Helper()
	out, err := f.Virtctl(args...)
	if err != nil {
		t.Fatalf("virtctl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// TestCloudInitRunsOncePerVM: a VM whose root disk is a PVC keeps cloud-init's instance-id
// (<name>.<namespace>) across `virtctl restart`, so the per-instance modules do not run again:
// the host keys stay, and the user data's commands ran once.
func TestCloudInitRunsOncePerVM(t *testing.T) {
	f := framework.New(t)
	key := sshKey(t, f, "ssh-keys")
	f.DiskPVC("debian-root", "debian-guest")
	vmi := debianVMI("persistent", nil, v1.VolumeSource{CloudInitNoCloud: &v1.CloudInitNoCloudSource{
		UserData: userData + "  - echo ran >> /var/tmp/runcmd-runs\n"}}, "noCloud")
	vmi.Spec.Volumes[0].VolumeSource = v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "debian-root"}}
	vm := &v1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: "persistent"}, Spec: v1.VirtualMachineSpec{
		RunStrategy: ptr.To(v1.RunStrategyAlways),
		Template:    &v1.VirtualMachineInstanceTemplateSpec{Spec: vmi.Spec},
	}}
	f.CreateVM(vm)
	first := f.WaitVMIPhase("persistent", v1.Running, 3*time.Minute)
	// The root volume's status names the claim, its size and its device, as in KubeVirt.
	if vs := first.Status.VolumeStatus; len(vs) == 0 || vs[0].Target != "vda" || vs[0].PersistentVolumeClaimInfo == nil ||
		vs[0].PersistentVolumeClaimInfo.ClaimName != "debian-root" || vs[0].PersistentVolumeClaimInfo.Capacity.Storage().IsZero() {
		t.Errorf("volumeStatus %+v, want the root claim debian-root with its capacity, on vda", vs)
	}
	pod := f.LauncherPod(first)
	// No image of the user's runs the launcher's tools, so the pod does not copy them.
	for _, c := range pod.Spec.InitContainers {
		if c.Name == "tools" {
			t.Errorf("launcher pod %s has a tools init container, though its disk is a PVC", pod.Name)
		}
	}
	f.WaitConsole(f.FollowConsole(pod), cloudInitDone, debianBoot)
	const state = "cat /var/lib/cloud/data/instance-id /etc/ssh/ssh_host_ed25519_key.pub /var/tmp/runcmd-runs"
	before := guestSSH(t, f, key, "persistent", state)
	if want := "persistent." + f.Namespace + "\n"; !strings.HasPrefix(before, want) {
		t.Errorf("instance-id: %q, want it to start with %q", before, want)
	}

	virtctl(t, f, "restart", "persistent")
	f.WaitNewRunningVMI("persistent", first.UID, 3*time.Minute)
	if after := guestSSH(t, f, key, "persistent", state); after != before {
		t.Errorf("cloud-init state changed across the restart:\nbefore: %q\nafter:  %q", before, after)
	}
}
