//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/test/e2e/framework"
	"github.com/vmctl/vmctl/test/testguest"
)

// TestTheGuestAgentReportsTheGuest: a guest that runs QEMU's guest agent (qemu-ga) gets the
// AgentConnected condition, its OS in status.guestOSInfo and its interfaces' names in the
// guest, and answers virtctl guestosinfo, userlist and fslist, as in KubeVirt. A guest
// without one is refused with KubeVirt's words.
func TestTheGuestAgentReportsTheGuest(t *testing.T) {
	f := framework.New(t)
	withAgent := framework.TestGuestVM("agent", v1.RunStrategyAlways)
	withAgent.Spec.Template.Spec = testguest.WithAgent(withAgent.Spec.Template.Spec)
	f.CreateVM(withAgent)
	f.CreateVM(framework.TestGuestVM("plain", v1.RunStrategyAlways))

	var vmi *v1.VirtualMachineInstance
	f.Eventually(bootTimeout, "VMI agent to have its guest agent connected", func(ctx context.Context) (bool, error) {
		var err error
		vmi, err = f.Virt.KubevirtV1().VirtualMachineInstances(f.Namespace).Get(ctx, "agent", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		c := vmi.Status.Condition(v1.VirtualMachineInstanceAgentConnected)
		return c != nil && c.Status == corev1.ConditionTrue && vmi.Status.GuestOSInfo.ID != "", nil
	})
	if os := vmi.Status.GuestOSInfo; os.ID != testguest.AgentOSID || os.KernelRelease == "" || os.Machine != "x86_64" {
		t.Errorf("status.guestOSInfo = %+v", os)
	}
	if len(vmi.Status.Interfaces) != 1 || vmi.Status.Interfaces[0].InterfaceName != "eth0" ||
		vmi.Status.Interfaces[0].InfoSource != v1.InfoSourceDomainGuestAgent {
		t.Errorf("status.interfaces = %+v, want eth0 from the domain and the guest agent", vmi.Status.Interfaces)
	}

	// What the guest got, as KubeVirt's status says it (no agent needed for these).
	if s := vmi.Status; s.QOSClass == nil || *s.QOSClass != corev1.PodQOSBurstable ||
		s.CurrentCPUTopology == nil || *s.CurrentCPUTopology != (v1.CPUTopology{Sockets: 1, Cores: 1, Threads: 1}) ||
		s.Memory == nil || s.Memory.GuestAtBoot == nil || s.Memory.GuestAtBoot.String() != "128Mi" {
		t.Errorf("qosClass %v, currentCPUTopology %+v, memory %+v", s.QOSClass, s.CurrentCPUTopology, s.Memory)
	}

	out, err := f.Virtctl("guestosinfo", "agent")
	if err != nil {
		t.Fatalf("virtctl guestosinfo: %v\n%s", err, out)
	}
	var info v1.VirtualMachineInstanceGuestAgentInfo
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		t.Fatalf("virtctl guestosinfo printed %q: %v", out, err)
	}
	if info.Hostname != "agent" || info.OS.ID != testguest.AgentOSID || info.Timezone == "" {
		t.Errorf("virtctl guestosinfo = %+v", info)
	}
	for _, cmd := range []string{"userlist", "fslist"} {
		out, err := f.Virtctl(cmd, "agent")
		var list struct{ Items []json.RawMessage }
		if err != nil || json.Unmarshal([]byte(out), &list) != nil || list.Items == nil {
			t.Errorf("virtctl %s: %v\n%s", cmd, err, out)
		}
	}

	f.WaitVMIPhase("plain", v1.Running, bootTimeout)
	out, err = f.Virtctl("guestosinfo", "plain")
	if err == nil || !strings.Contains(out, "VMI does not have guest agent connected") {
		t.Errorf("virtctl guestosinfo of a guest without an agent: %v\n%s", err, out)
	}
	if c := f.WaitVMIPhase("plain", v1.Running, bootTimeout).Status.Condition(v1.VirtualMachineInstanceAgentConnected); c != nil {
		t.Errorf("a guest without an agent has %+v", c)
	}
}

// TestSSHKeysThroughTheGuestAgent: KubeVirt's qemuGuestAgent key propagation. The Secret's
// keys become the named users' authorized keys in the guest, and an edit of the Secret
// reaches the running guest. The guest shows it to an exec probe (through the agent too):
// it is Ready once root's authorized_keys holds the second key.
func TestSSHKeysThroughTheGuestAgent(t *testing.T) {
	f := framework.New(t)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "keys"},
		StringData: map[string]string{"key": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFirst first@e2e\n"}}
	if _, err := f.Kube.CoreV1().Secrets(f.Namespace).Create(f.Context(), secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	spec := testguest.WithAgent(framework.TestGuestSpec("keyed"))
	spec.AccessCredentials = []v1.AccessCredential{{SSHPublicKey: &v1.SSHPublicKeyAccessCredential{
		Source: v1.SSHPublicKeyAccessCredentialSource{Secret: &v1.AccessCredentialSecretSource{SecretName: "keys"}},
		PropagationMethod: v1.SSHPublicKeyAccessCredentialPropagationMethod{
			QemuGuestAgent: &v1.QemuGuestAgentSSHPublicKeyAccessCredentialPropagation{Users: []string{"root"}}},
	}}}
	spec.ReadinessProbe = &v1.Probe{Handler: v1.Handler{Exec: &corev1.ExecAction{
		Command: []string{"grep", "-q", "second@e2e", "/root/.ssh/authorized_keys"}}}, PeriodSeconds: 2, TimeoutSeconds: 5}
	f.CreateVMI(&v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "keyed"}, Spec: spec})

	ready := func(ctx context.Context) (bool, error) {
		vmi, err := f.Virt.KubevirtV1().VirtualMachineInstances(f.Namespace).Get(ctx, "keyed", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		c := vmi.Status.Condition(v1.VirtualMachineInstanceReady)
		return c != nil && c.Status == corev1.ConditionTrue, nil
	}
	waitAgentConnected(f, "keyed")
	time.Sleep(15 * time.Second) // the first key is set meanwhile; the probe wants the second
	if ok, _ := ready(f.Context()); ok {
		t.Fatal("keyed is Ready before its Secret has the second key")
	}

	secret.StringData = map[string]string{"key": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAISecond second@e2e\n"}
	if _, err := f.Kube.CoreV1().Secrets(f.Namespace).Update(f.Context(), secret, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The kubelet refreshes the Secret's mount within its sync period (about a minute), the
	// launcher reads it every 10 s.
	f.Eventually(3*time.Minute, "keyed to be Ready with the edited Secret's key", ready)
}

// TestPasswordsThroughTheGuestAgent: accessCredentials userPassword (KubeVirt's): each key of
// the Secret is a user, its value the password, which the guest agent sets in the guest; an
// edited Secret changes the password in the running guest.
func TestPasswordsThroughTheGuestAgent(t *testing.T) {
	f := framework.New(t)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "passwords"}, StringData: map[string]string{"root": "first-Pw1"}}
	if _, err := f.Kube.CoreV1().Secrets(f.Namespace).Create(f.Context(), secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	spec := testguest.WithAgent(framework.TestGuestSpec("locked"))
	spec.AccessCredentials = []v1.AccessCredential{{UserPassword: &v1.UserPasswordAccessCredential{
		Source:            v1.UserPasswordAccessCredentialSource{Secret: &v1.AccessCredentialSecretSource{SecretName: "passwords"}},
		PropagationMethod: v1.UserPasswordAccessCredentialPropagationMethod{QemuGuestAgent: &v1.QemuGuestAgentUserPasswordAccessCredentialPropagation{}},
	}}}
	f.CreateVMI(&v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "locked"}, Spec: spec})
	vmi := f.WaitVMIPhase("locked", v1.Running, bootTimeout)

	// The guest checks a password against its /etc/shadow as login would.
	accepts := func(password string) func(context.Context) (bool, error) {
		return func(ctx context.Context) (bool, error) {
			fresh, err := f.Virt.KubevirtV1().VirtualMachineInstances(vmi.Namespace).Get(ctx, vmi.Name, metav1.GetOptions{})
			if err != nil || len(fresh.Status.Interfaces) == 0 {
				return false, err
			}
			body, err := get(ctx, "http://"+fresh.Status.Interfaces[0].IP+"/cgi-bin/checkpw?user=root&password="+password)
			return strings.TrimSpace(body) == "ok", err
		}
	}
	f.Eventually(bootTimeout, "the guest to take root's password from the Secret", accepts("first-Pw1"))

	secret.StringData = map[string]string{"root": "second-Pw2"}
	if _, err := f.Kube.CoreV1().Secrets(f.Namespace).Update(f.Context(), secret, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The kubelet refreshes the Secret's mount within its sync period (about a minute), the
	// launcher reads it every 10 s.
	f.Eventually(3*time.Minute, "the guest to take the edited Secret's password", accepts("second-Pw2"))
	if ok, err := accepts("first-Pw1")(f.Context()); ok || err != nil {
		t.Errorf("the guest still takes the first password (err %v)", err)
	}
}

// waitAgentConnected waits until the instance's guest agent is connected.
func waitAgentConnected(f *framework.Framework, name string) {
	f.Eventually(bootTimeout, "VMI "+name+" to have its guest agent connected", func(ctx context.Context) (bool, error) {
		vmi, err := f.Virt.KubevirtV1().VirtualMachineInstances(f.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		c := vmi.Status.Condition(v1.VirtualMachineInstanceAgentConnected)
		return c != nil && c.Status == corev1.ConditionTrue, nil
	})
}
