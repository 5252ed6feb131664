package launcher

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
	"k8s.io/klog/v2"
)

// Reaper makes this process a child subreaper and waits for every child it gets. libvirtd
// daemonizes QEMU (double fork), so QEMU's parent exits at once and the kernel reparents QEMU
// to the nearest subreaper: us, not tini. Unless someone waits for it, an exited QEMU stays a
// zombie, and libvirt's teardown of a domain waits ~2 s for it to disappear.
//
// Because the reaper waits for any pid, nothing else in this process may call wait on a
// child (exec.Cmd.Wait, exec.Cmd.Run): the reaper would steal its status. Children the launcher
// starts itself go through Start, which hands their exit status back on a channel. The network
// setup uses netlink only, never exec, for that reason.
type Reaper struct {
	// mu makes "start a child and record its pid" atomic with respect to reaping: the child
	// cannot be reaped before its pid is in tracked.
	mu      sync.Mutex
	tracked map[int]chan<- ExitStatus
	sigs    chan os.Signal
	done    chan struct{}
}

// ExitStatus is how a child ended.
type ExitStatus struct {
	Pid    int
	Status unix.WaitStatus
}

func (e ExitStatus) String() string {
	switch {
	case e.Status.Exited():
		return fmt.Sprintf("exit status %d", e.Status.ExitStatus())
	case e.Status.Signaled():
		return fmt.Sprintf("killed by signal %v", e.Status.Signal())
	default:
		return fmt.Sprintf("wait status %#x", uint32(e.Status))
	}
}

// NewReaper marks this process as a child subreaper and starts reaping. Stop ends it.
func NewReaper() (*Reaper, error) {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return nil, fmt.Errorf("become child subreaper: %w", err)
	}
	r := &Reaper{
		tracked: map[int]chan<- ExitStatus{},
		sigs:    make(chan os.Signal, 1),
		done:    make(chan struct{}),
	}
	signal.Notify(r.sigs, syscall.SIGCHLD)
	go r.loop()
	// Orphans may have arrived before the signal handler was installed.
	r.reapAll()
	return r, nil
}

// Start starts cmd and returns a channel that receives its exit status once. cmd must not
// be waited for by the caller. Its stdio must be *os.File (or nil): exec.Cmd copies other
// readers and writers in goroutines that only Wait would end.
func (r *Reaper) Start(cmd *exec.Cmd) (<-chan ExitStatus, error) {
	ch := make(chan ExitStatus, 1)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	r.tracked[cmd.Process.Pid] = ch
	return ch, nil
}

// Stop stops reaping. Children that exit later stay zombies until this process ends.
func (r *Reaper) Stop() {
	signal.Stop(r.sigs)
	close(r.done)
}

func (r *Reaper) loop() {
	for {
		select {
		case <-r.sigs:
			r.reapAll()
		case <-r.done:
			return
		}
	}
}

// reapAll waits for every child that has exited. SIGCHLD is not queued per child, so one
// signal may stand for several exits: loop until none is left.
func (r *Reaper) reapAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil || pid <= 0 { // ECHILD: no children; 0: none exited yet
			return
		}
		st := ExitStatus{Pid: pid, Status: ws}
		if ch, ok := r.tracked[pid]; ok {
			delete(r.tracked, pid)
			ch <- st
			continue
		}
		klog.V(2).InfoS("reaped orphan", "pid", pid, "status", st.String())
	}
}
