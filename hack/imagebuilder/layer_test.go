package main

import (
	"archive/tar"
	"io"
	"testing"
)

func TestLayerFromFilesEntries(t *testing.T) {
	layer, err := layerFromFiles([]File{
		{Path: "/usr/bin/tool", Mode: 0o755, Data: []byte("x")},
		{Path: "/bin/sh", Link: "busybox"},
		{Path: "/tmp", Mode: 0o1777, Dir: true},
		// A directory with files: once, with its own mode (mergeTrees gives the packages' own).
		{Path: "/opt", Mode: 0o700, Dir: true},
		{Path: "/opt/x", Mode: 0o644},
	})
	if err != nil {
		t.Fatal(err)
	}
	rc, err := layer.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	got := map[string]*tar.Header{}
	var names []string
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got[hdr.Name] = hdr
		names = append(names, hdr.Name)
	}
	for _, want := range []tar.Header{
		{Name: "bin/", Typeflag: tar.TypeDir, Mode: 0o755},
		{Name: "opt/", Typeflag: tar.TypeDir, Mode: 0o700},
		{Name: "opt/x", Typeflag: tar.TypeReg, Mode: 0o644},
		{Name: "bin/sh", Typeflag: tar.TypeSymlink, Mode: 0o777, Linkname: "busybox"},
		{Name: "tmp/", Typeflag: tar.TypeDir, Mode: 0o1777},
		{Name: "usr/bin/", Typeflag: tar.TypeDir, Mode: 0o755},
		{Name: "usr/bin/tool", Typeflag: tar.TypeReg, Mode: 0o755},
	} {
		h := got[want.Name]
		if h == nil || h.Typeflag != want.Typeflag || h.Mode != want.Mode || h.Linkname != want.Linkname {
			t.Errorf("%s: got %+v, want type %c mode %o link %q", want.Name, h, want.Typeflag, want.Mode, want.Linkname)
		}
	}
	if len(names) != 8 { // usr/ too
		t.Errorf("%d entries, want 8: %v", len(names), names)
	}
}
