package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// memoryByPart is a launcher pod's memory by part, in MiB: each process's proportional set
// size (shared pages, such as the binaries' and libraries', split among the processes that map
// them), and QEMU's split into the guest's RAM (the anonymous mapping of the guest's size), TCG's
// translation cache (the anonymous executable mapping) and the rest, QEMU's own.
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
		ram, tcg, total := qemuMappings(pid, guestBytes>>10)
		out[partGuestRAM] += ram
		out[partTCG] += tcg
		out[partQEMUOwn] += total - ram - tcg
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

// qemuMappings reads a QEMU's smaps: the Pss (MiB) of the guest's RAM, of the TCG translation
// cache, and of all its mappings.
func qemuMappings(pid string, guestKiB int64) (ram, tcg, total float64) {
	f, err := os.Open(filepath.Join("/proc", pid, "smaps"))
	if err != nil {
		return 0, 0, 0
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
		}
	}
	return ram, tcg, total
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
