package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTicks is the kernel's USER_HZ, the unit of /proc/PID/stat's CPU times (100 on every
// Linux architecture this runs on; reading it needs sysconf, which needs cgo).
const clockTicks = 100

// cpuProcesses are the processes whose CPU the bench reports: the control plane, kwok, and the
// project's components, all on this host.
var cpuProcesses = []string{"kube-apiserver", "etcd", "kube-scheduler", "kube-controller-manager",
	"kwok", "virt-api", "virt-controller", "controller"}

// cpuTimes are CPU seconds by process name since each process started.
type cpuTimes map[string]float64

// hostProcesses are this host's processes: their /proc directory by the base name of argv[0].
func hostProcesses() map[string][]string {
	byName := map[string][]string{}
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, path := range cmdlines {
		cmd, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		argv0, _, _ := bytes.Cut(cmd, []byte{0})
		name := filepath.Base(string(argv0))
		byName[name] = append(byName[name], filepath.Dir(path))
	}
	return byName
}

// readCPU sums the user and system CPU of the reported processes by name (the bench itself,
// run by go run, is "controller").
func readCPU() cpuTimes {
	t := cpuTimes{}
	procs := hostProcesses()
	for _, name := range cpuProcesses {
		for _, dir := range procs[name] {
			if stat, err := os.ReadFile(filepath.Join(dir, "stat")); err == nil {
				t[name] += statCPUSeconds(stat)
			}
		}
	}
	return t
}

// statCPUSeconds is utime+stime of a /proc/PID/stat line. The command name in parentheses
// may hold spaces, so fields count from the last ')'.
func statCPUSeconds(stat []byte) float64 {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0
	}
	// After ") ": state is field 3; utime and stime are fields 14 and 15.
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 13 {
		return 0
	}
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	return (utime + stime) / clockTicks
}

// since is the CPU each process used from before to t. A process that restarted in between
// counts from zero.
func (t cpuTimes) since(before cpuTimes) cpuTimes {
	d := cpuTimes{}
	for name, now := range t {
		if was := before[name]; now >= was {
			d[name] = now - was
		} else {
			d[name] = now
		}
	}
	return d
}

// phaseClock times one phase: wall seconds and the reported processes' CPU, read at the same
// two instants, so the CPU covers exactly the seconds reported (not the namespace set-up or
// the metric scrapes around the phase).
type phaseClock struct {
	start time.Time
	cpu   cpuTimes
}

func startPhase() phaseClock { return phaseClock{start: time.Now(), cpu: readCPU()} }

func (p phaseClock) seconds() float64 { return time.Since(p.start).Seconds() }

func (p phaseClock) cpuSeconds() cpuTimes { return readCPU().since(p.cpu) }
