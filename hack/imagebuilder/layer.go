package main

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"path"
	"sort"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// epoch is the modification time of every file the builder writes, so layers are reproducible.
var epoch = time.Unix(0, 0).UTC()

// File is one regular file of a layer.
type File struct {
	// Path inside the image, absolute.
	Path string
	Mode int64
	Data []byte
	// Link, when set, makes the file a symbolic link to it (Data unused).
	Link string
	// Dir makes the file an empty directory of Mode (Data unused).
	Dir bool
}

// fileFromDisk reads a local file into a File placed at imagePath.
func fileFromDisk(local, imagePath string, mode int64) (File, error) {
	data, err := os.ReadFile(local)
	return File{Path: imagePath, Mode: mode, Data: data}, err
}

// layerFromFiles makes a reproducible layer: files sorted, parent directories added, all
// owned by root with fixed timestamps.
func layerFromFiles(files []File) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	for _, f := range files {
		for _, dir := range parents(f.Path) {
			if dirs[dir] {
				continue
			}
			dirs[dir] = true
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir + "/", Mode: 0o755, ModTime: epoch}); err != nil {
				return nil, err
			}
		}
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: f.Path[1:], Mode: f.Mode, Size: int64(len(f.Data)), ModTime: epoch}
		switch {
		case f.Link != "":
			hdr = &tar.Header{Typeflag: tar.TypeSymlink, Name: f.Path[1:], Linkname: f.Link, Mode: 0o777, ModTime: epoch}
		case f.Dir:
			dirs[f.Path[1:]] = true // written once, with its own mode, before what it holds
			hdr = &tar.Header{Typeflag: tar.TypeDir, Name: f.Path[1:] + "/", Mode: f.Mode, ModTime: epoch}
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.Data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	})
}

// parents lists the directories above an absolute path, outermost first, without the root.
func parents(p string) []string {
	var out []string
	for dir := path.Dir(p); dir != "/"; dir = path.Dir(dir) {
		out = append([]string{dir[1:]}, out...)
	}
	return out
}
