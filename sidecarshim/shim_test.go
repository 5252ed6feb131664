package sidecarshim

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunHook(t *testing.T) {
	for _, tc := range []struct {
		name, script, want, err string
	}{
		{name: "the domain on stdout", script: "#!/bin/sh\n[ \"$1\" = --vmi ] && [ \"$3\" = --domain ] && echo \"$4\" | sed s/a/b/\n", want: "<b/>\n"},
		{name: "a failure says why", script: "#!/bin/sh\necho 'no such element' >&2\nexit 3\n", err: "exit status 3: no such element"},
		{name: "nothing written", script: "#!/bin/sh\nexit 0\n", err: "wrote no domain"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hook := filepath.Join(t.TempDir(), "onDefineDomain")
			if err := os.WriteFile(hook, []byte(tc.script), 0o755); err != nil {
				t.Fatal(err)
			}
			out, err := runHook(context.Background(), hook, "--vmi", "{}", "--domain", "<a/>")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil || string(out) != tc.want {
				t.Errorf("got %q, %v; want %q", out, err, tc.want)
			}
		})
	}
}
