package v1

// ACPITable is one table of spec.domain.firmware.acpi: the secret volume that holds it and
// the key it is under (KubeVirt's slic.bin, msdm.bin: the whole table, header included).
//
// +k8s:deepcopy-gen=false
type ACPITable struct {
	Field     string // slicNameRef or msdmNameRef
	Signature string // SLIC or MSDM
	Volume    string
	Key       string
}

// ACPITables are the tables the instance asks for, SLIC first.
func ACPITables(spec *VirtualMachineInstanceSpec) []ACPITable {
	fw := spec.Domain.Firmware
	if fw == nil || fw.ACPI == nil {
		return nil
	}
	var tables []ACPITable
	if ref := fw.ACPI.SlicNameRef; ref != "" {
		tables = append(tables, ACPITable{Field: "slicNameRef", Signature: "SLIC", Volume: ref, Key: "slic.bin"})
	}
	if ref := fw.ACPI.MsdmNameRef; ref != "" {
		tables = append(tables, ACPITable{Field: "msdmNameRef", Signature: "MSDM", Volume: ref, Key: "msdm.bin"})
	}
	return tables
}
