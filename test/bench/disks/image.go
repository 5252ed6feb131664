package main

import (
	"archive/tar"
	"fmt"
	"io"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/vmctl/vmctl/test/containerdisk"
)

// writeGrownImage writes to dest an image tagged tag whose /disk/ holds the disk of the
// containerDisk tarball src followed by zeros up to size bytes, owned as src's.
func writeGrownImage(src, dest, tag string, size int64) error {
	disk, hdr, err := readDisk(src)
	if err != nil {
		return err
	}
	if int64(len(disk)) > size {
		return fmt.Errorf("the disk is %d bytes, more than %d", len(disk), size)
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(writeLayer(pw, hdr, disk, size)) }()
		return pr, nil
	})
	if err != nil {
		return err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return err
	}
	ref, err := name.NewTag(tag)
	if err != nil {
		return err
	}
	return tarball.WriteToFile(dest, ref, img)
}

// writeLayer is a tar of /disk/ and the disk file grown to size.
func writeLayer(w io.Writer, hdr *tar.Header, disk []byte, size int64) error {
	tw := tar.NewWriter(w)
	dir := &tar.Header{Typeflag: tar.TypeDir, Name: "disk/", Mode: 0o555, Uid: hdr.Uid, Gid: hdr.Gid, ModTime: hdr.ModTime}
	file := *hdr
	file.Size = size
	if err := tw.WriteHeader(dir); err != nil {
		return err
	}
	if err := tw.WriteHeader(&file); err != nil {
		return err
	}
	if _, err := tw.Write(disk); err != nil {
		return err
	}
	zeros := make([]byte, 1<<20)
	for left := size - int64(len(disk)); left > 0; left -= int64(len(zeros)) {
		if _, err := tw.Write(zeros[:min(left, int64(len(zeros)))]); err != nil {
			return err
		}
	}
	return tw.Close()
}

// readDisk returns the disk of a containerDisk image tarball and its header.
func readDisk(src string) ([]byte, *tar.Header, error) {
	rc, hdr, err := containerdisk.Open(src)
	if err != nil {
		return nil, nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	return data, hdr, err
}
