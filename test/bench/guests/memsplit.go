package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/vmctl/vmctl/launcher/layout"
)

// memoryByPart is a launcher pod's memory by part, in MiB: each process's proportional set
// size (shared pages, such as the binaries' and libraries', split among the processes that map
// them), and QEMU's split into the guest's RAM (the anonymous mapping of the guest's size), TCG's
// translation cache (the anonymous executable mapping), the guest's kernel and initrd as QEMU
// holds them for a kernelBoot (kernelBootMiB), and the rest, QEMU's own.
func memoryByPart(uid string, guestBytes int64) map[string]float64 {
	dir := podCgroup(uid)
	if dir == "" {
		return nil
	}
	out := map[string]float64{}
	for _, pid := range podProcesses(dir) {
		st, ok := readProc(pid)
		if !ok {
			continue
		}
		p := part(st.comm, st.cmdline)
		if p != partQEMU {
			out[p] += rollupPss(pid)
			continue
		}
		ram, tcg, initrd, total := qemuMappings(pid, guestBytes>>10)
		kernel := min(kernelBootMiB(pid)+initrd, total-ram-tcg)
		out[partGuestRAM] += ram
		out[partTCG] += tcg
		out[partKernel] += kernel
		out[partQEMUOwn] += total - ram - tcg - kernel
	}
	return out
}

// rollupPss is a process's proportional set size in MiB.
func rollupPss(pid string) float64 {
	f, err := os.Open(filepath.Join("/proc", pid, "smaps_rollup"))
	if err != nil {
		return 0
	}
	defer f.Close()
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		if v, ok := kiB(scanner.Text(), "Pss:"); ok {
			return v / 1024
		}
	}
	return 0
}

// kernelBootMiB is the size of the kernel a QEMU boots directly (0 for a guest booted by its
// firmware): QEMU reads the whole file into memory it keeps, to load it again on a reboot. The
// initrd it maps from the file instead, which qemuMappings counts.
func kernelBootMiB(pid string) float64 {
	st, err := os.Stat(inRoot(filepath.Join("/proc", pid, "root"), layout.InPod(layout.KernelRel)))
	if err != nil {
		return 0
	}
	return float64(st.Size()) / (1 << 20)
}

// inRoot is path p as a process whose root is root sees it. Links are resolved here, as the
// kernel would resolve an absolute link (the image's /var/run -> /run) from our root instead.
func inRoot(root, p string) string {
	at, rest := root, strings.Split(strings.Trim(p, "/"), "/")
	for links := 0; len(rest) > 0 && links < 40; {
		next := filepath.Join(at, rest[0])
		target, err := os.Readlink(next)
		if err != nil {
			at, rest = next, rest[1:]
			continue
		}
		links++
		if filepath.IsAbs(target) {
			at = root
		}
		rest = append(strings.Split(strings.Trim(target, "/"), "/"), rest[1:]...)
	}
	if !strings.HasPrefix(at, root) {
		return root
	}
	return at
}

// qemuMappings reads a QEMU's smaps: the Pss (MiB) of the guest's RAM, of the TCG translation
// cache, of the kernelBoot initrd, and of all its mappings.
func qemuMappings(pid string, guestKiB int64) (ram, tcg, initrd, total float64) {
	f, err := os.Open(filepath.Join("/proc", pid, "smaps"))
	if err != nil {
		return 0, 0, 0, 0
	}
	defer f.Close()
	var size float64
	var perms, path string
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		line := scanner.Text()
		fields := strings.Fields(line)
		if len(fields) >= 5 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			perms, path = fields[1], ""
			if len(fields) > 5 {
				path = fields[5]
			}
			continue
		}
		if v, ok := kiB(line, "Size:"); ok {
			size = v
			continue
		}
		v, ok := kiB(line, "Pss:")
		if !ok {
			continue
		}
		total += v / 1024
		switch {
		case path == "" && int64(size) == guestKiB:
			ram += v / 1024
		case path == "" && perms == "rwxp":
			tcg += v / 1024
		case strings.HasSuffix(path, "/"+layout.InitrdRel):
			initrd += v / 1024
		}
	}
	return ram, tcg, initrd, total
}

// kiB parses a "Name:   123 kB" line of smaps.
func kiB(line, name string) (float64, bool) {
	rest, ok := strings.CutPrefix(line, name)
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
	return v, err == nil
}
