package admission

import (
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/vmctl/vmctl/pkg/hooks"
)

// SidecarGate is KubeVirt's feature gate for hook sidecars (virt-api --feature-gates). Off by
// default, as in KubeVirt: a sidecar rewrites the domain virt-handler defines.
const SidecarGate = "Sidecar"

// hookSidecars checks the hooks.kubevirt.io/hookSidecars annotation: refused without the
// gate; with it, each sidecar needs an image (or a ConfigMap script, which the platform's
// sidecar-shim runs, as in KubeVirt), a pull policy the kubelet knows, and a
// ConfigMap script that names its ConfigMap, key and absolute path. A sidecar's claims are
// refused: they are not offered.
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
			errs = append(errs, field.Forbidden(sp.Child("pvc"), "claims in hook sidecars are not supported by this platform"))
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
