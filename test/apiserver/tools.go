// Package apiserver runs a real etcd and kube-apiserver for integration tests, built by
// hack/build-tools.sh from the pinned tools module, and installs the project's CRDs.
package apiserver

import (
	"fmt"
	"os"
	"path/filepath"
)

// RepoRoot is the directory holding the project's go.mod, found from the working directory.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && isProjectModule(data) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no project go.mod above the working directory")
		}
		dir = parent
	}
}

func isProjectModule(goMod []byte) bool {
	const first = "module github.com/vmctl/vmctl\n"
	return len(goMod) >= len(first) && string(goMod[:len(first)]) == first
}

// Tool is the path of a pinned tool binary: $VMCTL_TOOLS_BIN/name, else _out/tools/bin/name.
func Tool(name string) (string, error) {
	dir := os.Getenv("VMCTL_TOOLS_BIN")
	if dir == "" {
		root, err := RepoRoot()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(root, "_out", "tools", "bin")
	}
	path := filepath.Join(dir, name)
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("%s not built (run `make tools`): %w", name, err)
	}
	return path, nil
}
