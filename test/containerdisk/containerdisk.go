// Package containerdisk reads the disk out of a containerDisk image tarball (as make images
// writes them to _out/images), for tests and benchmarks that need the disk itself.
package containerdisk

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Open returns the first regular file under /disk/ of the image tarball at path, as a reader
// the caller closes, and its tar header (size, owner).
func Open(path string) (io.ReadCloser, *tar.Header, error) {
	img, err := tarball.ImageFromPath(path, nil)
	if err != nil {
		return nil, nil, err
	}
	layers, err := img.Layers()
	if err != nil {
		return nil, nil, err
	}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			return nil, nil, err
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				rc.Close()
				return nil, nil, err
			}
			if h.Typeflag == tar.TypeReg && strings.HasPrefix(strings.TrimPrefix(h.Name, "/"), "disk/") {
				return struct {
					io.Reader
					io.Closer
				}{tr, rc}, h, nil
			}
		}
		rc.Close()
	}
	return nil, nil, fmt.Errorf("%s: no file under /disk/", path)
}
