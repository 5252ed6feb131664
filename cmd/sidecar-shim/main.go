// Command sidecar-shim is a hook sidecar (KubeVirt's sidecar-shim) that runs the hook
// executables of its image, or a script from a ConfigMap, for virt-handler:
//
//	sidecar-shim --version v1alpha2
package main

import (
	"github.com/spf13/pflag"

	"github.com/vmctl/vmctl/pkg/component"
	"github.com/vmctl/vmctl/pkg/hooks"
	"github.com/vmctl/vmctl/sidecarshim"
)

func main() {
	o := sidecarshim.Options{}
	pflag.StringVar(&o.Version, "version", "v1alpha2", "the hook Callbacks version to serve: v1alpha1, v1alpha2 or v1alpha3")
	pflag.StringVar(&o.SocketsDir, "sockets-dir", hooks.SocketsDir, "where virt-handler looks for the sidecars' sockets")
	component.ParseFlags()
	component.Exit(sidecarshim.Run(component.SignalContext(), o))
}
