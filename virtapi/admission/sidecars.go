package admission

import (
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/vmctl/vmctl/launcher/layout"
	"github.com/vmctl/vmctl/pkg/hooks"
)

// SidecarGate is KubeVirt's feature gate for hook sidecars (virt-api --feature-gates). Off by
// default, as in KubeVirt: a sidecar rewrites the domain virt-handler defines.
const SidecarGate = "Sidecar"

// hookSidecars checks the hooks.kubevirt.io/hookSidecars annotation: refused without the
// gate; with it, each sidecar needs an image (or a ConfigMap script, which the platform's
// sidecar-shim runs, as in KubeVirt), a pull policy the kubelet knows, and a
// ConfigMap script that names its ConfigMap, key and absolute path, and a claim mounted
// clear of what the pod mounts already (sidecarClaim).
func hookSidecars(p *field.Path, annotations map[string]string, limits Limits) field.ErrorList {
	if _, ok := annotations[hooks.SidecarsAnnotation]; !ok {
		return nil
	}
	ap := p.Key(hooks.SidecarsAnnotation)
	if !limits.Sidecar {
		return field.ErrorList{field.Forbidden(ap, "hook sidecars need the Sidecar feature gate, which this cluster has not enabled (virt-api --feature-gates=Sidecar)")}
	}
	list, err := hooks.Sidecars(annotations)
	if err != nil {
		return field.ErrorList{field.Invalid(ap, field.OmitValueType{}, err.Error())}
	}
	var errs field.ErrorList
	for i, sc := range list {
		sp := ap.Index(i)
		if sc.Image == "" && sc.ConfigMap == nil {
			errs = append(errs, field.Required(sp.Child("image"), "the sidecar's image (without one, a configMap's script runs in the platform's sidecar-shim)"))
		}
		switch sc.ImagePullPolicy {
		case "", corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
		default:
			errs = append(errs, field.NotSupported(sp.Child("imagePullPolicy"), sc.ImagePullPolicy, []corev1.PullPolicy{corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever}))
		}
		if sc.PVC != nil {
			errs = append(errs, sidecarClaim(sp.Child("pvc"), list, i)...)
		}
		if sc.ConfigMap != nil {
			errs = append(errs, scriptConfigMap(sp.Child("configMap"), sc.ConfigMap)...)
			// The shim would serve the script at no hook point: say so rather than skip it.
			if sc.Image == "" && path.Base(sc.ConfigMap.HookPath) == "preCloudInitIso" && shimVersion(sc.Args) == "v1alpha1" {
				errs = append(errs, field.Invalid(sp.Child("args"), sc.Args, "hook version v1alpha1 has no PreCloudInitIso: use --version v1alpha2 or v1alpha3"))
			}
		}
	}
	return errs
}

// shimVersion is the hook version a sidecar-shim's arguments ask for.
func shimVersion(args []string) string {
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, "--version="); ok {
			return v
		}
		if a == "--version" && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// sidecarClaim checks the i-th sidecar's claim: a claim's name, a volumePath in the sidecar
// clear of its sockets and script, and a sharedComputePath in compute clear of the
// launcher's own mounts, of the image's directories the launcher runs from, and of the other
// sidecars' claims. An overlap would be refused with the pod, or hide what the launcher
// needs, where only the instance's failure would tell.
func sidecarClaim(p *field.Path, list []hooks.Sidecar, i int) field.ErrorList {
	pvc := list[i].PVC
	var errs field.ErrorList
	if pvc.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), "the claim's name"))
	} else {
		for _, msg := range validation.IsDNS1123Subdomain(pvc.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), pvc.Name, msg))
		}
	}
	taken := []string{hooks.SocketsDir}
	if cm := list[i].ConfigMap; cm != nil {
		taken = append(taken, cm.HookPath)
	}
	errs = append(errs, claimMountPath(p.Child("volumePath"), pvc.VolumePath, taken, "the sidecar's")...)
	if pvc.SharedComputePath == "" {
		return errs
	}
	taken = append(layout.ComputeDirs(), "/proc", "/sys")
	for _, other := range list[:i] {
		if other.PVC != nil && other.PVC.SharedComputePath != "" {
			taken = append(taken, other.PVC.SharedComputePath)
		}
	}
	errs = append(errs, claimMountPath(p.Child("sharedComputePath"), pvc.SharedComputePath, taken, "the compute container's")...)
	for _, dir := range imageDirs {
		if within(dir, pvc.SharedComputePath) {
			errs = append(errs, field.Invalid(p.Child("sharedComputePath"), pvc.SharedComputePath, "would hide the launcher image's "+dir))
			break
		}
	}
	return errs
}

// imageDirs are what the compute container runs from its image.
var imageDirs = []string{"/usr", "/etc", "/bin", "/sbin", "/lib", "/lib64"}

// claimMountPath checks a claim's mount point: absolute, clean, not the root, and neither in
// nor above a path the container mounts already.
func claimMountPath(p *field.Path, at string, taken []string, whose string) field.ErrorList {
	if !path.IsAbs(at) || path.Clean(at) != at || at == "/" {
		return field.ErrorList{field.Invalid(p, at, "must be an absolute, clean path to a directory other than /")}
	}
	for _, t := range taken {
		if within(at, t) || within(t, at) {
			return field.ErrorList{field.Invalid(p, at, "overlaps "+whose+" "+t)}
		}
	}
	return nil
}

// within: path p is dir or under it. /var/run is a link to /run in the images.
func within(p, dir string) bool {
	p, dir = unlinked(p), unlinked(dir)
	return p == dir || strings.HasPrefix(p, dir+"/")
}

func unlinked(p string) string {
	if rest, ok := strings.CutPrefix(p, "/var/run"); ok && (rest == "" || rest[0] == '/') {
		return "/run" + rest
	}
	return p
}

func scriptConfigMap(p *field.Path, cm *hooks.ConfigMap) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(cm.Name) {
		errs = append(errs, field.Invalid(p.Child("name"), cm.Name, msg))
	}
	for _, msg := range validation.IsConfigMapKey(cm.Key) {
		errs = append(errs, field.Invalid(p.Child("key"), cm.Key, msg))
	}
	if !path.IsAbs(cm.HookPath) || path.Clean(cm.HookPath) != cm.HookPath || cm.HookPath == "/" {
		errs = append(errs, field.Invalid(p.Child("hookPath"), cm.HookPath, "must be an absolute, clean path to a file (the sidecar-shim runs /usr/bin/onDefineDomain and /usr/bin/preCloudInitIso)"))
	}
	return errs
}
