package launcher

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"time"

	"golang.org/x/sys/unix"
	"k8s.io/klog/v2"

	"github.com/vmctl/vmctl/launcher/layout"
)

// FollowConsole copies the guest's serial console log in privateDir to out until ctx ends,
// then once more. It is the launcher pod's guest-console-log container (KubeVirt's name), so
// `kubectl logs POD -c guest-console-log` shows the guest's console and nothing else, and the
// compute container's log is the launcher's and libvirt's. That container is a sidecar the
// kubelet stops after compute, so the shutdown's last lines, written just before QEMU exits,
// are copied too.
func FollowConsole(ctx context.Context, privateDir string, out io.Writer) {
	<-followConsole(ConsoleLogPath(privateDir), layout.ConsoleLogMax, out, 100*time.Millisecond, ctx.Done())
}

// consoleFollower copies the guest's serial log to stdout as QEMU appends to it. QEMU writes the file itself (the domain's serial
// <log file>), and creates it only when the domain starts, so the follower polls: a missing
// file is normal. Polling rather than inotify keeps it simple and works on any emptyDir
// medium; 100 ms is well below what a human notices.
//
// The file lives in the pod's emptyDir, so a guest writing to its console without end must not
// fill it: once max bytes were copied since the last time, their disk space is freed by
// punching a hole over them. The file's size and QEMU's appends (O_APPEND) are left alone, so
// nothing QEMU writes meanwhile is lost; truncating instead lost what it wrote during the copy,
// a flooding guest's last lines. Stdout itself is the kubelet's container log, which the
// kubelet rotates.
type consoleFollower struct {
	path string
	max  int64
	out  io.Writer
	f    *os.File
	off  int64
	// reclaimed is where the file's disk space is held again: before it lies a hole.
	reclaimed int64
	// copied counts the bytes copied so far.
	copied int64
}

// step copies whatever was appended since the last step.
func (c *consoleFollower) step() error {
	if c.f == nil {
		// Read-write: punching a hole needs a writable descriptor.
		f, err := os.OpenFile(c.path, os.O_RDWR, 0)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		c.f, c.off = f, 0
	}
	fi, err := c.f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() < c.off {
		// Truncated (a new QEMU without append): start over.
		c.off, c.reclaimed = 0, 0
	}
	if fi.Size() == c.off {
		return nil
	}
	n, err := io.Copy(c.out, io.NewSectionReader(c.f, c.off, fi.Size()-c.off))
	c.off += n
	c.copied += n
	if err != nil || c.max <= 0 || c.off-c.reclaimed < c.max {
		return err
	}
	return c.reclaim()
}

// reclaim frees the disk space of what was copied. A filesystem that cannot punch holes gets
// the file truncated, losing what QEMU appended since the copy.
func (c *consoleFollower) reclaim() error {
	err := unix.Fallocate(int(c.f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, c.reclaimed, c.off-c.reclaimed)
	if err == nil {
		c.reclaimed = c.off
		return nil
	}
	if !errors.Is(err, unix.EOPNOTSUPP) {
		return err
	}
	if err := os.Truncate(c.path, 0); err != nil {
		return err
	}
	c.off, c.reclaimed = 0, 0
	return nil
}

func (c *consoleFollower) close() {
	if c.f != nil {
		c.f.Close()
	}
}

// followConsole copies path to out until stop closes, then copies what is left once more
// (the last lines of a shutdown) and closes done. The file is kept under maxBytes (0: no bound).
// It polls every poll while the guest writes, and backs off to idlePoll while it does not: a
// VM's console is quiet most of its life, and a waking poller costs CPU on every node that runs
// VMs (0.4 CPU-s per guest boot at 100 ms on a busy node, measured by make bench).
func followConsole(path string, maxBytes int64, out io.Writer, poll time.Duration, stop <-chan struct{}) (done <-chan struct{}) {
	c := &consoleFollower{path: path, max: maxBytes, out: out}
	d := make(chan struct{})
	go func() {
		defer close(d)
		defer c.close()
		wait := poll
		timer := time.NewTimer(wait)
		defer timer.Stop()
		failing := false
		for {
			before := c.copied
			err := c.step()
			if err != nil && !failing {
				klog.ErrorS(err, "copying the guest console", "path", path)
			}
			failing = err != nil
			if wait = min(wait*2, max(idlePoll, poll)); c.copied != before {
				wait = poll
			}
			timer.Reset(wait)
			select {
			case <-stop:
				if err := c.step(); err != nil {
					klog.ErrorS(err, "copying the guest console", "path", path)
				}
				return
			case <-timer.C:
			}
		}
	}()
	return d
}

// idlePoll is the longest pause between two looks at a quiet console.
const idlePoll = time.Second
