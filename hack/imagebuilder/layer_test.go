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
	}
	for _, want := range []tar.Header{
		{Name: "bin/", Typeflag: tar.TypeDir, Mode: 0o755},
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
	if len(got) != 6 { // usr/ too
		t.Errorf("%d entries, want 6: %v", len(got), got)
	}
}
