package handler

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"os"

	"github.com/kdomanski/iso9660"
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// NoCloudLabel is the volume label cloud-init's NoCloud data source looks for.
const NoCloudLabel = "cidata"

// NoCloudData is the content of a NoCloud seed: meta-data, user-data and, when given,
// network-config.
type NoCloudData struct {
	MetaData    []byte
	UserData    []byte
	NetworkData []byte
}

// noCloudData resolves a cloudInitNoCloud volume: inline text, base64 or a secret for the user
// data and the network data; meta-data names the instance (its UID, so cloud-init runs once
// per instance) and its hostname.
func noCloudData(vmi *v1.VirtualMachineInstance, src *v1.CloudInitNoCloudSource, secrets secretReader) (NoCloudData, error) {
	hostname := vmi.Spec.Hostname
	if hostname == "" {
		hostname = vmi.Name
	}
	data := NoCloudData{MetaData: fmt.Appendf(nil, "instance-id: %s\nlocal-hostname: %s\n", vmi.UID, hostname)}
	var err error
	data.UserData, err = cloudInitPart("userData", src.UserData, src.UserDataBase64, refName(src.UserDataSecretRef), secrets, "userdata", "userData")
	if err != nil {
		return data, err
	}
	data.NetworkData, err = cloudInitPart("networkData", src.NetworkData, src.NetworkDataBase64, refName(src.NetworkDataSecretRef), secrets, "networkdata", "networkData")
	return data, err
}

func refName(ref *corev1.LocalObjectReference) string {
	if ref == nil {
		return ""
	}
	return ref.Name
}

// cloudInitPart is the one source set of text, base64 and secret (keys tried in order).
func cloudInitPart(field, text, b64, secret string, secrets secretReader, keys ...string) ([]byte, error) {
	set := 0
	for _, s := range []string{text, b64, secret} {
		if s != "" {
			set++
		}
	}
	if set > 1 {
		return nil, invalidSpec("cloudInitNoCloud: set at most one of %s, %sBase64 and the %s secret", field, field, field)
	}
	switch {
	case text != "":
		return []byte(text), nil
	case b64 != "":
		out, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			return nil, invalidSpec("cloudInitNoCloud: %sBase64: %v", field, err)
		}
		return out, nil
	case secret != "":
		values, err := secrets(secret)
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			if v, ok := values[k]; ok {
				return v, nil
			}
		}
		return nil, invalidSpec("cloudInitNoCloud: secret %q has no key %s or %s", secret, keys[0], keys[1])
	}
	return nil, nil
}

// ensureNoCloudISO writes the seed ISO at rel unless it exists: the data of an instance never
// changes, and the guest may have it open.
func ensureNoCloudISO(root *os.Root, rel string, data NoCloudData) error {
	return createOnce(root, rel, func(f *os.File) error { return writeNoCloudISO(f, data) })
}

// writeNoCloudISO writes an ISO 9660 image labelled cidata holding user-data, meta-data and,
// when there is network data, network-config. The names keep their case and dashes (Linux's
// isofs shows them as written), which is what cloud-init reads.
func writeNoCloudISO(w io.Writer, data NoCloudData) error {
	iw, err := iso9660.NewWriter()
	if err != nil {
		return fmt.Errorf("staging the cloud-init ISO: %w", err)
	}
	defer func() { _ = iw.Cleanup() }()
	files := []struct {
		name    string
		content []byte
	}{{"user-data", data.UserData}, {"meta-data", data.MetaData}}
	if data.NetworkData != nil {
		files = append(files, struct {
			name    string
			content []byte
		}{"network-config", data.NetworkData})
	}
	for _, f := range files {
		if err := iw.AddFile(bytes.NewReader(f.content), f.name); err != nil {
			return fmt.Errorf("staging %s: %w", f.name, err)
		}
	}
	return iw.WriteTo(w, NoCloudLabel)
}
