package virtctl

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// volumeParams are the key:value pairs of a --volume-* flag (src:IMAGE,name:N,bootorder:1),
// split as KubeVirt splits them: at commas, then at the first colon, so an image's registry
// port and tag survive.
type volumeParams struct {
	src, name string
	bootOrder *uint
}

func parseVolume(flag, value string) (volumeParams, error) {
	var p volumeParams
	var unknown []string
	for _, pair := range strings.Split(value, ",") {
		key, val, ok := strings.Cut(pair, ":")
		if !ok {
			return p, fmt.Errorf("%s: %q is not key:value", flag, pair)
		}
		switch key {
		case "src":
			p.src = val
		case "name":
			p.name = val
		case "bootorder":
			n, err := strconv.ParseUint(val, 10, 32)
			if err != nil || n == 0 {
				return p, fmt.Errorf("%s: bootorder must be an integer greater than 0, not %q", flag, val)
			}
			order := uint(n)
			p.bootOrder = &order
		default:
			unknown = append(unknown, pair)
		}
	}
	if len(unknown) > 0 {
		return p, fmt.Errorf("%s: unknown param(s): %s (supported: src, name, bootorder)", flag, strings.Join(unknown, ", "))
	}
	if p.src == "" {
		return p, fmt.Errorf("%s: src must be specified", flag)
	}
	return p, nil
}

// addVolumes adds the containerdisks, then the PVCs, then the cloud-init volume, each with
// its disk (the node attaches only volumes that have one), in that order; a bootorder is set
// only where given, as KubeVirt does.
func (o vmOptions) addVolumes(vm *v1.VirtualMachine) error {
	spec := &vm.Spec.Template.Spec
	used := map[uint]string{}
	add := func(flag string, p volumeParams, src v1.VolumeSource) error {
		for _, v := range spec.Volumes {
			if v.Name == p.name {
				return fmt.Errorf("%s: there is already a volume named %q", flag, p.name)
			}
		}
		if p.bootOrder != nil {
			if other, dup := used[*p.bootOrder]; dup {
				return fmt.Errorf("%s: bootorder %d is already %s's", flag, *p.bootOrder, other)
			}
			used[*p.bootOrder] = p.name
		}
		spec.Volumes = append(spec.Volumes, v1.Volume{Name: p.name, VolumeSource: src})
		spec.Domain.Devices.Disks = append(spec.Domain.Devices.Disks, v1.Disk{Name: p.name, BootOrder: p.bootOrder})
		return nil
	}
	for i, value := range o.containerDisks {
		p, err := parseVolume("--volume-containerdisk", value)
		if err != nil {
			return err
		}
		if p.name == "" {
			p.name = fmt.Sprintf("%s-containerdisk-%d", vm.Name, i)
		}
		if err := add("--volume-containerdisk", p, v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: p.src}}); err != nil {
			return err
		}
	}
	for _, value := range o.pvcs {
		p, err := parseVolume("--volume-pvc", value)
		if err != nil {
			return err
		}
		if strings.Contains(p.src, "/") {
			return fmt.Errorf("--volume-pvc: not allowed to specify the namespace of PVC %q: a VM uses claims of its own namespace", p.src)
		}
		if p.name == "" {
			p.name = p.src
		}
		if err := add("--volume-pvc", p, v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: p.src}}); err != nil {
			return err
		}
	}
	if o.userData != "" || o.networkData != "" {
		for flag, data := range map[string]string{"--cloud-init-user-data": o.userData, "--cloud-init-network-data": o.networkData} {
			if _, err := base64.StdEncoding.DecodeString(data); err != nil {
				return fmt.Errorf("%s: not base64: %v", flag, err)
			}
		}
		src := &v1.CloudInitNoCloudSource{UserDataBase64: o.userData, NetworkDataBase64: o.networkData}
		if err := add("--cloud-init-user-data", volumeParams{name: cloudInitVolume}, v1.VolumeSource{CloudInitNoCloud: src}); err != nil {
			return err
		}
	}
	return nil
}
