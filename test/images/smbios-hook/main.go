// Command smbios-hook is the onDefineDomain hook of the example-hook-sidecar image (KubeVirt's
// example hook, run here by the sidecar-shim): it puts the instance's annotation
// smbios.vm.kubevirt.io/baseBoardManufacturer into the domain's SMBIOS base board.
//
//	onDefineDomain --vmi <instance JSON> --domain <domain XML>
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/pflag"
	"libvirt.org/go/libvirtxml"
)

const manufacturerAnnotation = "smbios.vm.kubevirt.io/baseBoardManufacturer"

func main() {
	vmiJSON := pflag.String("vmi", "", "the instance, as JSON")
	domXML := pflag.String("domain", "", "the domain, as XML")
	pflag.Parse()
	out, err := hook([]byte(*vmiJSON), *domXML)
	if err != nil {
		fmt.Fprintln(os.Stderr, "smbios-hook:", err)
		os.Exit(1)
	}
	fmt.Print(out)
}

func hook(vmiJSON []byte, domXML string) (string, error) {
	var vmi struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(vmiJSON, &vmi); err != nil {
		return "", fmt.Errorf("--vmi: %w", err)
	}
	var dom libvirtxml.Domain
	if err := dom.Unmarshal(domXML); err != nil {
		return "", fmt.Errorf("--domain: %w", err)
	}
	manufacturer, ok := vmi.Metadata.Annotations[manufacturerAnnotation]
	if !ok {
		return domXML, nil
	}
	if dom.OS == nil {
		dom.OS = &libvirtxml.DomainOS{}
	}
	dom.OS.SMBios = &libvirtxml.DomainSMBios{Mode: "sysinfo"}
	var smbios *libvirtxml.DomainSysInfoSMBIOS
	for i := range dom.SysInfo {
		if dom.SysInfo[i].SMBIOS != nil {
			smbios = dom.SysInfo[i].SMBIOS
		}
	}
	if smbios == nil {
		dom.SysInfo = append(dom.SysInfo, libvirtxml.DomainSysInfo{SMBIOS: &libvirtxml.DomainSysInfoSMBIOS{}})
		smbios = dom.SysInfo[len(dom.SysInfo)-1].SMBIOS
	}
	smbios.BaseBoard = append(smbios.BaseBoard, libvirtxml.DomainSysInfoBaseBoard{
		Entry: []libvirtxml.DomainSysInfoEntry{{Name: "manufacturer", Value: manufacturer}},
	})
	return dom.Marshal()
}
