package handler

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/pkg/hooks"
)

// TestPreCloudInitIso: a sidecar subscribed to PreCloudInitIso gets the volume's data as
// KubeVirt's CloudInitData and the instance, and what it answers is written; one that is not
// subscribed, or speaks only v1alpha1 (which has no PreCloudInitIso), is asked nothing.
func TestPreCloudInitIso(t *testing.T) {
	started := metav1.NewTime(time.Unix(1000, 0))
	root, pod, dir := hookPod(t, started)
	var got kubeVirtCloudInit
	serveHook(t, dir, "a.sock", &hooks.Info{Name: "a", Versions: []string{"v1alpha3"}, HookPoints: []*hooks.HookPoint{{Name: hooks.PreCloudInitIso}}},
		hooks.Hooks{PreCloudInitIso: func(_ context.Context, data, vmi []byte) ([]byte, error) {
			if !strings.Contains(string(vmi), `"kind":"VirtualMachineInstance"`) {
				t.Errorf("the hook got no whole instance: %s", vmi)
			}
			if err := json.Unmarshal(data, &got); err != nil {
				return nil, err
			}
			out := got
			out.UserData = "#cloud-config\nhooked: true\n"
			return json.Marshal(out)
		}})
	serveHook(t, dir, "b.sock", &hooks.Info{Name: "b", Versions: []string{"v1alpha2"}, HookPoints: []*hooks.HookPoint{{Name: hooks.OnDefineDomain}}},
		hooks.Hooks{PreCloudInitIso: func(context.Context, []byte, []byte) ([]byte, error) {
			t.Error("a sidecar not subscribed to PreCloudInitIso was asked")
			return nil, nil
		}})
	serveHook(t, dir, "c.sock", &hooks.Info{Name: "c", Versions: []string{"v1alpha1"}, HookPoints: []*hooks.HookPoint{{Name: hooks.PreCloudInitIso}}}, hooks.Hooks{})
	vmi := &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "vm",
		Annotations: map[string]string{hooks.SidecarsAnnotation: `[{"image": "a"}, {"image": "b"}, {"image": "c"}]`}}}
	c := &Controller{opts: Options{KubeletRoot: root}, clock: clocktesting.NewFakePassiveClock(started.Time)}
	sidecars, err := c.connectHooks(vmi, pod)
	if err != nil {
		t.Fatal(err)
	}
	defer sidecars.close()

	in := CloudInitData{InstanceID: "vm.ns", Hostname: "vm", UserData: []byte("#cloud-config\n")}
	out, err := sidecars.preCloudInitIso(noCloudSource(&v1.CloudInitNoCloudSource{}), "cloudinitdisk", in)
	if err != nil {
		t.Fatal(err)
	}
	want := kubeVirtCloudInit{DataSource: "noCloud", NoCloudMetaData: &noCloudMetaData{InstanceID: "vm.ns", LocalHostname: "vm"},
		UserData: "#cloud-config\n", VolumeName: "cloudinitdisk"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the hook got (-want +got):\n%s", diff)
	}
	if string(out.UserData) != "#cloud-config\nhooked: true\n" || out.InstanceID != "vm.ns" {
		t.Errorf("written %+v, want the hook's user data and the instance-id kept", out)
	}
}

func TestFromKubeVirtCloudInit(t *testing.T) {
	before := CloudInitData{InstanceID: "vm.ns", Hostname: "vm", UserData: []byte("old"), NetworkData: []byte("net"),
		Devices: []DeviceData{{Type: deviceDisk, Tags: []string{"a"}}}}
	for _, tc := range []struct {
		name   string
		drive  bool
		answer hooks.CloudInit
		want   CloudInitData
		err    string
	}{
		{name: "user data replaced, network data removed", answer: hooks.CloudInit{Data: []byte(`{"UserData":"new","NoCloudMetaData":{"instance-id":"vm.ns"}}`)},
			want: CloudInitData{InstanceID: "vm.ns", Hostname: "vm", UserData: []byte("new"), Devices: before.Devices}},
		{name: "config drive metadata and devices", drive: true,
			answer: hooks.CloudInit{Data: []byte(`{"UserData":"u","ConfigDriveMetaData":{"instance_id":"other","local_hostname":"h","public_keys":{"k":"ssh-ed25519 A"}},"DevicesData":[]}`)},
			want:   CloudInitData{InstanceID: "other", Hostname: "h", UserData: []byte("u"), PublicKeys: map[string]string{"k": "ssh-ed25519 A"}, Devices: []DeviceData{}}},
		{name: "legacy NoCloud source", answer: hooks.CloudInit{NoCloudSource: []byte(`{"userDataBase64":"bGVnYWN5"}`)},
			want: CloudInitData{InstanceID: "vm.ns", Hostname: "vm", UserData: []byte("legacy"), Devices: before.Devices}},
		{name: "legacy source naming a secret", answer: hooks.CloudInit{NoCloudSource: []byte(`{"secretRef":{"name":"s"}}`)}, err: "cannot name secrets"},
		{name: "empty answer", err: "no cloud-init data"},
		{name: "not JSON", answer: hooks.CloudInit{Data: []byte("#cloud-config")}, err: "cloud-init data:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := noCloudSource(&v1.CloudInitNoCloudSource{})
			if tc.drive {
				src = configDriveSource(&v1.CloudInitConfigDriveSource{})
			}
			got, err := fromKubeVirtCloudInit(src, before, tc.answer)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Error(diff)
			}
		})
	}
}
