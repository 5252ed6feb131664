package main

import (
	"bytes"
	"debug/elf"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Kernel module dependencies, read from the modules themselves. A kernel .deb ships no
// modules.dep (depmod makes it when the package is installed), but each .ko names the modules
// it needs in the depends= field of its .modinfo section, which is all modules.dep is made of.

// moduleLoadOrder returns the .ko files, relative to moduleDir (/lib/modules/<version>), that
// loading the wanted modules takes: dependencies before the modules needing them, each once.
// Wanted modules built into the kernel (modules.builtin) are skipped.
func moduleLoadOrder(moduleDir string, wanted []string) ([]string, error) {
	paths := map[string]string{} // module name -> path relative to moduleDir
	err := filepath.WalkDir(filepath.Join(moduleDir, "kernel"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".ko") {
			return err
		}
		rel, err := filepath.Rel(moduleDir, p)
		paths[moduleName(filepath.Base(p))] = rel
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list kernel modules: %w", err)
	}
	builtin := map[string]bool{}
	if data, err := os.ReadFile(filepath.Join(moduleDir, "modules.builtin")); err == nil {
		for _, line := range strings.Fields(string(data)) {
			builtin[moduleName(filepath.Base(line))] = true
		}
	}

	var order []string
	state := map[string]int{} // 1: visiting, 2: done
	var visit func(name, neededBy string) error
	visit = func(name, neededBy string) error {
		switch state[name] {
		case 1:
			return fmt.Errorf("kernel module dependency cycle at %s", name)
		case 2:
			return nil
		}
		rel, ok := paths[name]
		if !ok {
			if builtin[name] {
				state[name] = 2
				return nil
			}
			return fmt.Errorf("kernel module %s (needed by %s) is neither a module nor built in", name, neededBy)
		}
		state[name] = 1
		deps, err := moduleDepends(filepath.Join(moduleDir, rel))
		if err != nil {
			return err
		}
		for _, dep := range deps {
			if err := visit(dep, name); err != nil {
				return err
			}
		}
		state[name] = 2
		order = append(order, rel)
		return nil
	}
	for _, name := range wanted {
		if err := visit(moduleName(name), "the module list"); err != nil {
			return nil, err
		}
	}
	return order, nil
}

// moduleName is how the kernel names a module: file name without .ko, dashes as underscores.
func moduleName(file string) string {
	return strings.ReplaceAll(strings.TrimSuffix(file, ".ko"), "-", "_")
}

// moduleDepends is the depends= field of a module's .modinfo section.
func moduleDepends(path string) ([]string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read kernel module: %w", err)
	}
	defer f.Close()
	sec := f.Section(".modinfo")
	if sec == nil {
		return nil, fmt.Errorf("%s has no .modinfo section", path)
	}
	data, err := sec.Data()
	if err != nil {
		return nil, fmt.Errorf("%s .modinfo: %w", path, err)
	}
	for _, field := range bytes.Split(data, []byte{0}) {
		if v, ok := bytes.CutPrefix(field, []byte("depends=")); ok {
			var deps []string
			for _, d := range strings.Split(string(v), ",") {
				if d != "" {
					deps = append(deps, moduleName(d))
				}
			}
			return deps, nil
		}
	}
	return nil, nil
}
