package handler

import (
	"encoding/binary"
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/vmctl/vmctl/launcher/layout"
	"github.com/vmctl/vmctl/test/fakelibvirtd"
)

// frame builds a frame of the remote program with the payload words.
func frame(proc, typ, status uint32, words ...uint32) []byte {
	be := binary.BigEndian
	b := make([]byte, frameHeaderLen)
	be.PutUint32(b[4:], remoteProgram)
	be.PutUint32(b[12:], proc)
	be.PutUint32(b[16:], typ)
	be.PutUint32(b[24:], status)
	for _, w := range words {
		b = be.AppendUint32(b, w)
	}
	be.PutUint32(b, uint32(len(b)))
	return b
}

func TestCheckFrame(t *testing.T) {
	uuid := []uint32{0, 0, 0, 0}
	domain := append(append([]uint32{4, 0x61626364}, uuid...), 7) // "abcd", uuid, id
	tests := []struct {
		name      string
		frame     []byte
		wantEvent bool
		wantErr   bool
	}{
		{"state reply", frame(procDomainGetState, typeReply, statusOK, 1, 1), false, false},
		{"lookup reply", frame(procDomainLookupByName, typeReply, statusOK, domain...), false, false},
		{"undefine reply", frame(procDomainUndefineFlags, typeReply, statusOK), false, false},
		{"lifecycle event", frame(procEventLifecycle, typeMessage, statusOK, append(append([]uint32{1}, domain...), 2, 0)...), true, false},
		{"agent event", frame(procEventAgentLifecycle, typeMessage, statusOK, append(append([]uint32{1}, domain...), 1, 2)...), true, false},
		{"guest info reply", frame(procDomainGetGuestInfo, typeReply, statusOK,
			1, 8, 0x686f7374, 0x6e616d65, 7, 3, 0x77656200), false, false}, // "hostname", string "web"
		{"guest info of more fields than libvirt sends", frame(procDomainGetGuestInfo, typeReply, statusOK, guestInfoParamsMax+1), false, true},
		{"freeze reply", frame(procDomainFSFreeze, typeReply, statusOK, 2), false, false}, // two file systems
		{"thaw reply", frame(procDomainFSThaw, typeReply, statusOK, 2), false, false},
		{"truncated freeze reply", frame(procDomainFSFreeze, typeReply, statusOK), false, true},
		{"error reply", frame(procDomainCreate, typeReply, statusError, 1, 10, 1, 3, 0x41420000, 2, 0, 0, 0, 0, 0, 0, 0), false, false},
		{"string longer than the frame", frame(procDomainGetXMLDesc, typeReply, statusOK, 0x7ffffff0), false, true},
		{"error message longer than the frame", frame(procDomainCreate, typeReply, statusError, 1, 10, 1, 0x7ffffff0), false, true},
		{"auth list too long", frame(procAuthList, typeReply, statusOK, 1000), false, true},
		{"bad optional flag", frame(procDomainCreate, typeReply, statusError, 1, 10, 7), false, true},
		{"truncated reply", frame(procDomainGetState, typeReply, statusOK, 1), false, true},
		{"domain stats reply", frame(procGetAllDomainStats, typeReply, statusOK, append(append([]uint32{1}, domain...),
			3, 8, 0x6370752e, 0x74696d65, 4, 0, 42, // cpu.time: unsigned long long 42
			4, 0x6e657420, 2, 7, // "net ", uint 7
			4, 0x626c6b30, 7, 3, 0x76646100)...), false, false}, // "blk0", string "vda"
		{"domain stats of unknown type", frame(procGetAllDomainStats, typeReply, statusOK, append(append([]uint32{1}, domain...),
			1, 4, 0x63707520, 9, 0)...), false, true},
		{"domain stats longer than the frame", frame(procGetAllDomainStats, typeReply, statusOK, append(append([]uint32{1}, domain...),
			2, 4, 0x63707520, 4, 0, 0)...), false, true},
		{"more domains than libvirt lists", frame(procGetAllDomainStats, typeReply, statusOK, domainListMax+1), false, true},
		{"reply to a call never made", frame(procConnectOpen+1000, typeReply, statusOK), false, true},
		{"another event", frame(procEventLifecycle+1, typeMessage, statusOK), false, true},
		{"a stream", frame(procDomainCreate, typeStream, statusOK), false, true},
		{"screenshot reply", frame(procDomainScreenshot, typeReply, statusOK, 1, 4, 0x696d6167), false, false},
		{"screenshot data", frame(procDomainScreenshot, typeStream, statusContinue, 0x50360a32, 0x20310a32), false, false},
		{"screenshot end", frame(procDomainScreenshot, typeStream, statusOK), false, false},
		{"screenshot stream error", frame(procDomainScreenshot, typeStream, statusError, 1, 10, 1, 0x7ffffff0), false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isEvent, err := checkFrame(tt.frame)
			if (err != nil) != tt.wantErr || isEvent != tt.wantEvent {
				t.Fatalf("checkFrame = %v, %v; want event %v, error %v", isEvent, err, tt.wantEvent, tt.wantErr)
			}
			if err != nil && !errors.Is(err, errLauncherProtocol) {
				t.Errorf("error %v is not errLauncherProtocol", err)
			}
		})
	}
}

func TestFrameGuardThrottlesEvents(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	ev := frame(procEventLifecycle, typeMessage, statusOK, 1, 0, 0, 0, 0, 0, 0, 0, 0)
	reply := frame(procDomainGetState, typeReply, statusOK, 1, 1)
	go func() {
		for range eventBurst * 3 {
			_, _ = server.Write(ev)
		}
		_, _ = server.Write(reply)
		server.Close()
	}()
	g := newFrameGuard(client)
	events := 0
	for {
		frames, err := g.next()
		if err != nil {
			break
		}
		for _, f := range frames {
			if binary.BigEndian.Uint32(f[12:]) == procEventLifecycle {
				events++
			}
		}
	}
	if events < eventBurst || events > eventBurst+eventRate {
		t.Errorf("%d of %d events passed, want about the burst of %d", events, eventBurst*3, eventBurst)
	}
}

// A hostile launcher fails its own connection, fast, without a panic or a large allocation.
func TestDialLibvirtSurvivesAHostileLauncher(t *testing.T) {
	for _, mode := range []string{fakelibvirtd.HugeFrame, fakelibvirtd.ShortFrame, fakelibvirtd.HugeString, fakelibvirtd.Hang} {
		t.Run(mode, func(t *testing.T) {
			dir, l := launcherListener(t)
			go func() { _ = fakelibvirtd.Serve(l, mode) }()

			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			lv, err := DialLibvirt(t.Context(), dir)
			if err == nil {
				lv.Close()
				t.Fatal("connected to a hostile libvirtd")
			}
			if !isLauncherFault(err) {
				t.Errorf("error %v is not a launcher fault", err)
			}
			if d := time.Since(start); d > connectTimeout+2*time.Second {
				t.Errorf("took %s", d)
			}
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			if grown := after.TotalAlloc - before.TotalAlloc; grown > 4*maxFrame {
				t.Errorf("allocated %d bytes", grown)
			}
			t.Logf("%s: %v", mode, err)
		})
	}
}

// launcherListener listens where a launcher's libvirtd would, in a private directory it
// returns, until the test ends.
func launcherListener(t *testing.T) (string, net.Listener) {
	t.Helper()
	dir := t.TempDir()
	sock := filepath.Join(dir, layout.SocketRel)
	if err := os.MkdirAll(filepath.Dir(sock), 0o700); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return dir, l
}
