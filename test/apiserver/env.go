package apiserver

import (
	"context"
	"os"

	"k8s.io/client-go/kubernetes"

	"github.com/vmctl/vmctl/client/clientset/versioned"
)

// Env is where an integration package starts: a server with the project's CRDs installed,
// and clients for it.
type Env struct {
	Server *Server
	Kube   kubernetes.Interface
	Virt   versioned.Interface
}

// Setup starts an Env in a temporary directory; with garbageCollector, also the controller
// manager (after the CRDs, so the garbage collector watches the project's kinds from the
// start). stop ends the processes and removes the directory; it is safe to call after an
// error.
func Setup(garbageCollector bool) (env *Env, stop func(), err error) {
	dir, err := os.MkdirTemp("", "vmctl-integration-")
	if err != nil {
		return nil, func() {}, err
	}
	env = &Env{}
	env.Server, err = Start(dir)
	stop = func() {
		env.Server.Stop()
		_ = os.RemoveAll(dir)
	}
	if err == nil {
		err = InstallCRDs(context.Background(), env.Server.Config)
	}
	if err == nil && garbageCollector {
		err = env.Server.StartControllerManager()
	}
	if err == nil {
		env.Kube, err = kubernetes.NewForConfig(env.Server.Config)
	}
	if err == nil {
		env.Virt, err = versioned.NewForConfig(env.Server.Config)
	}
	return env, stop, err
}
