package downwardmetrics

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestReportNamesKubeVirtsMetrics(t *testing.T) {
	vm := VMStats{CPUTime: 1500 * time.Millisecond, VCPUs: 2, MemoryKiB: 131072, Hypervisor: "7.2.0"}
	got := string(Report("node1", vm, nil).Marshal())
	for _, want := range []string{
		`<metric type="string" context="host">` + "\n    <name>HostName</name>\n    <value>node1</value>",
		"<name>VirtualizationVendor</name>\n    <value>kubevirt.io</value>",
		"<name>VirtProductInfo</name>\n    <value>7.2.0</value>",
		`<metric type="real64" context="vm" unit="s">` + "\n    <name>TotalCPUTime</name>\n    <value>1.500000</value>",
		"<name>ResourceProcessorLimit</name>\n    <value>2</value>",
		`<metric type="uint64" context="vm" unit="KiB">` + "\n    <name>PhysicalMemoryAllocatedToVirtualSystem</name>\n    <value>131072</value>",
		"<name>ResourceMemoryLimit</name>\n    <value>131072</value>",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the document lacks %q:\n%s", want, got)
		}
	}
}

func TestHostMetricsComeFromProcAndSys(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("proc/meminfo", "MemTotal: 1000 kB\nMemFree: 300 kB\nBuffers: 50 kB\nCached: 150 kB\nSwapCached: 0 kB\nSwapTotal: 100 kB\nSwapFree: 80 kB\n")
	write("proc/stat", "cpu  100 10 40 900 0 0 0 0 0 0\ncpu0 100 10 40 900 0 0 0 0 0 0\n")
	write("proc/vmstat", "pswpin 3\npswpout 5\n")
	for _, cpu := range []string{"cpu0", "cpu1"} {
		for _, f := range []string{"core_id", "physical_package_id", "core_siblings_list", "thread_siblings_list"} {
			write("sys/devices/system/cpu/"+cpu+"/topology/"+f, "0\n")
		}
	}
	now := time.Unix(1700000000, 0)
	got := map[string]string{}
	for _, m := range (Host{Proc: filepath.Join(dir, "proc"), Sys: filepath.Join(dir, "sys")}).Metrics(now) {
		got[m.Name] = m.Value + " " + m.Unit
	}
	page := os.Getpagesize() / 1024
	for name, want := range map[string]string{
		"NumberOfPhysicalCPUs":            "1 ",
		"TotalCPUTime":                    "1.500000 s", // user+nice+system ticks at 100 Hz
		"FreePhysicalMemory":              "300 KiB",
		"FreeVirtualMemory":               "380 KiB",
		"MemoryAllocatedToVirtualServers": "500 KiB",
		"UsedVirtualMemory":               "600 KiB",
		"PagedInMemory":                   itoa(3*page) + " KiB",
		"PagedOutMemory":                  itoa(5*page) + " KiB",
		"Time":                            "1700000000 s",
	} {
		if got[name] != want {
			t.Errorf("%s = %q, want %q", name, got[name], want)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
