package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The parts of a launcher pod that the bench tells apart, by process. What the pod's cgroup
// used beyond its live processes (the sandbox's pause, tini, the init containers that copied
// the binary and the kernel, processes that exited) is its infrastructure.
const (
	partQEMU     = "QEMU"
	partLibvirtd = "libvirtd"
	partLauncher = "virt-launcher"
	partConsole  = "guest-console-log sidecar"
	partInfra    = "pod infrastructure (pause, tini, init containers)"
	// QEMU's memory is split further: the guest's RAM, TCG's translation cache, the guest's
	// kernel and initrd (a kernelBoot guest's, kept to boot it again), and QEMU's own.
	partGuestRAM = "QEMU: guest RAM"
	partTCG      = "QEMU: TCG translation cache"
	partKernel   = "QEMU: the guest's kernelBoot kernel and initrd"
	partQEMUOwn  = "QEMU: itself"
)

// part names the part of the pod a process is, from its command name and line.
func part(comm, cmdline string) string {
	switch {
	case strings.HasPrefix(comm, "qemu-system"):
		return partQEMU
	case comm == "libvirtd":
		return partLibvirtd
	case comm == "virt-launcher" && strings.Contains(cmdline, "guest-console-log"):
		return partConsole
	case comm == "virt-launcher":
		return partLauncher
	}
	return partInfra
}

// cpuPoint is a pod's CPU seconds by part at one moment; total is its cgroup's.
type cpuPoint struct {
	at    time.Time
	total float64
	parts map[string]float64
}

// cpuSampler records, every few seconds (cpuSampleEvery), each launcher pod's CPU by part, so
// the CPU spent until a guest's marker can be read afterwards, once the markers' times are known.
type cpuSampler struct {
	mu     sync.Mutex
	series map[string][]cpuPoint // by pod UID
	cgroup map[string]string     // pod UID -> its cpuacct cgroup
}

func sampleCPU(ctx context.Context, w *watcher, every time.Duration) *cpuSampler {
	s := &cpuSampler{series: map[string][]cpuPoint{}, cgroup: map[string]string{}}
	go func() {
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			w.mu.Lock()
			uids := make([]string, 0, len(w.uid))
			for _, uid := range w.uid {
				uids = append(uids, uid)
			}
			w.mu.Unlock()
			for _, uid := range uids {
				s.sample(uid)
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

func (s *cpuSampler) sample(uid string) {
	dir := s.cgroup[uid]
	if dir == "" {
		if dir = podCgroup(uid); dir == "" {
			return // not started yet, or gone
		}
		s.cgroup[uid] = dir
	}
	usage, err := os.ReadFile(filepath.Join(dir, "cpuacct.usage"))
	if err != nil {
		return
	}
	ns, _ := strconv.ParseFloat(strings.TrimSpace(string(usage)), 64)
	p := cpuPoint{at: time.Now(), total: ns / 1e9, parts: map[string]float64{}}
	for _, pid := range podProcesses(dir) {
		if st, ok := readProc(pid); ok {
			p.parts[part(st.comm, st.cmdline)] += st.cpu
		}
	}
	s.mu.Lock()
	s.series[uid] = append(s.series[uid], p)
	s.mu.Unlock()
}

// at is the pod's CPU by part at t, interpolated between the samples around it; the pod's
// infrastructure is what its cgroup used beyond the parts. ok is false without samples on
// both sides of t.
func (s *cpuSampler) at(uid string, t time.Time) (map[string]float64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	series := s.series[uid]
	for i := 1; i < len(series); i++ {
		a, b := series[i-1], series[i]
		if b.at.Before(t) {
			continue
		}
		if a.at.After(t) {
			return nil, false
		}
		f := float64(t.Sub(a.at)) / float64(b.at.Sub(a.at))
		out := map[string]float64{}
		known := 0.0
		for _, name := range []string{partQEMU, partLibvirtd, partLauncher, partConsole} {
			v := a.parts[name] + f*(b.parts[name]-a.parts[name])
			// A process that started between the samples had no time before.
			if _, was := a.parts[name]; !was {
				v = f * b.parts[name]
			}
			if v > 0 {
				out[name] = v
				known += v
			}
		}
		out[partInfra] = max(a.total+f*(b.total-a.total)-known, 0)
		return out, true
	}
	return nil, false
}

// podCgroup is the pod's cgroup in the cpuacct hierarchy (cgroup v1, as on the local
// cluster's nodes, whose cgroup roots are / and /<node>), "" when there is none.
func podCgroup(uid string) string {
	for _, pattern := range []string{"kubepods/*/pod%s", "kubepods/pod%s", "*/kubepods/*/pod%s", "*/kubepods/pod%s"} {
		matches, _ := filepath.Glob(filepath.Join("/sys/fs/cgroup/cpuacct", strings.ReplaceAll(pattern, "%s", uid)))
		if len(matches) > 0 {
			return matches[0]
		}
	}
	return ""
}

// podProcesses are the processes of a pod's containers (one cgroup each under the pod's).
func podProcesses(dir string) []string {
	containers, _ := filepath.Glob(filepath.Join(dir, "*", "cgroup.procs"))
	var pids []string
	for _, f := range containers {
		raw, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		pids = append(pids, strings.Fields(string(raw))...)
	}
	return pids
}

type procStat struct {
	comm, cmdline string
	// cpu is the process's user and system time, with that of the children it waited for
	// (libvirtd's capability probes of QEMU), in seconds.
	cpu float64
	// rssPages is its resident set, in pages.
	rssPages float64
}

func readProc(pid string) (procStat, bool) {
	stat, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return procStat{}, false
	}
	open, close := strings.IndexByte(string(stat), '('), strings.LastIndexByte(string(stat), ')')
	if open < 0 || close < open {
		return procStat{}, false
	}
	fields := strings.Fields(string(stat[close+1:]))
	if len(fields) < 22 {
		return procStat{}, false
	}
	var ticks float64
	for _, i := range []int{11, 12, 13, 14} { // utime, stime, cutime, cstime
		v, _ := strconv.ParseFloat(fields[i], 64)
		ticks += v
	}
	rss, _ := strconv.ParseFloat(fields[21], 64)
	cmdline, _ := os.ReadFile(filepath.Join("/proc", pid, "cmdline"))
	const clockTicks = 100 // USER_HZ on Linux
	return procStat{comm: string(stat[open+1 : close]), cmdline: strings.ReplaceAll(string(cmdline), "\x00", " "),
		cpu: ticks / clockTicks, rssPages: rss}, true
}
