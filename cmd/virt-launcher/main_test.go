package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCopyCommands(t *testing.T) {
	tmp := t.TempDir()
	kernel, initrd := filepath.Join(tmp, "vmlinuz"), filepath.Join(tmp, "initrd.img")
	for _, p := range []string{kernel, initrd} {
		if err := os.WriteFile(p, []byte(filepath.Base(p)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(tmp, "private")
	tests := []struct {
		name    string
		args    []string
		want    map[string]string // file under out -> content
		wantErr bool
	}{
		{name: "copy-file pairs", args: []string{"copy-file", kernel, out + "/kernel-boot/kernel", initrd, out + "/kernel-boot/initrd"},
			want: map[string]string{"kernel-boot/kernel": "vmlinuz", "kernel-boot/initrd": "initrd.img"}},
		{name: "copy-file odd arguments", args: []string{"copy-file", kernel, out + "/k", initrd}, wantErr: true},
		{name: "copy-file nothing", args: []string{"copy-file"}, wantErr: true},
		// hold-disk serves until SIGTERM: launcher/containerdisk tests what it does.
		{name: "hold-disk one argument", args: []string{"hold-disk", kernel}, wantErr: true},
		{name: "guest-console-log takes no arguments", args: []string{"guest-console-log", kernel}, wantErr: true},
		{name: "run takes no arguments", args: []string{"extra"}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := rootCommand()
			root.SetArgs(tc.args)
			root.SetOut(new(nopWriter))
			root.SetErr(new(nopWriter))
			err := root.Execute()
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want error %v", err, tc.wantErr)
			}
			for rel, content := range tc.want {
				got, err := os.ReadFile(filepath.Join(out, rel))
				if err != nil || string(got) != content {
					t.Errorf("%s: %q, %v; want %q", rel, got, err, content)
				}
			}
		})
	}
}

type nopWriter struct{}

func (*nopWriter) Write(p []byte) (int, error) { return len(p), nil }
