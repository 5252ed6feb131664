package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/vmctl/vmctl/controller/vmi"
	"github.com/vmctl/vmctl/test/testguest"
)

// markers fills in when each sample's guest printed its marker on the serial console: the
// timestamp the container runtime gave the line in the launcher pod's guest-console-log
// container, which copies the console as QEMU writes it (within 100 ms) in VMs and floor pods
// alike. It polls the pods whose guests have not printed it yet, and gives up on them once none
// of them has printed anything on its console for stall, or no marker has come for three
// times that: one guest that hangs in its boot must not hold the whole run until its timeout.
// A guest that is only slow keeps printing its boot; on a loaded node the guests share the CPU
// and reach their markers late and close together, long after the last one started, so a
// stall counted from the last marker alone gave up on guests that were still booting. It
// returns the pods it gave up on, which the figures leave out.
func (b *bench) markers(ctx context.Context, ns string, w *watcher, samples []sample, stall time.Duration) ([]string, error) {
	for i := range samples {
		if samples[i].pod == "" {
			samples[i].pod = w.podOf(samples[i].name)
		}
	}
	lastMarker, lastPrint, printed := time.Now(), time.Now(), map[string]int{}
	for {
		var missing []string
		for i := range samples {
			s := &samples[i]
			if !s.marker.IsZero() {
				continue
			}
			at, size, err := b.markerAt(ctx, ns, s.pod)
			if err != nil {
				klog.V(2).InfoS("no console yet", "pod", s.pod, "err", err)
			}
			if size > printed[s.pod] {
				printed[s.pod], lastPrint = size, time.Now()
			}
			if s.marker = at; at.IsZero() {
				missing = append(missing, s.pod)
			} else {
				lastMarker = time.Now()
			}
		}
		if len(missing) == 0 {
			return nil, nil
		}
		if stalled(time.Now(), lastPrint, lastMarker, stall) {
			klog.ErrorS(nil, "giving up on guests that printed no marker", "consoleQuietFor", time.Since(lastPrint), "lastMarker", time.Since(lastMarker), "pods", missing)
			return missing, nil
		}
		klog.InfoS("waiting for guest markers", "missing", len(missing), "of", len(samples))
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%d guests did not print %s: %w", len(missing), testguest.Marker, ctx.Err())
		case <-time.After(markerPoll):
		}
	}
}

// stalled says the guests still booting are taken for hung: none has printed anything for
// stall, or none has printed its marker for three times that (a guest that hangs printing,
// kernel stall warnings for one, must not hold the run either).
func stalled(now, lastPrint, lastMarker time.Time, stall time.Duration) bool {
	return now.Sub(lastPrint) > stall || now.Sub(lastMarker) > 3*stall
}

// markerPoll is the pause between two reads of the pods still booting. The times come from the
// log lines, so it bounds only how soon the wait ends, while each read costs the API server and
// the kubelet a little of the CPU the guests are booting on.
const markerPoll = 15 * time.Second

// markerAt is when the pod's guest printed its marker, zero if it has not yet, and how many
// bytes its console has printed so far.
func (b *bench) markerAt(ctx context.Context, ns, pod string) (time.Time, int, error) {
	if pod == "" {
		return time.Time{}, 0, nil
	}
	raw, err := b.kube.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{Container: vmi.GuestConsoleLogContainer, Timestamps: true}).DoRaw(ctx)
	if err != nil {
		return time.Time{}, 0, err
	}
	at, err := markerIn(raw)
	return at, len(raw), err
}

// markerIn finds the first marker line in a log read with timestamps ("<RFC3339Nano> <line>").
func markerIn(log []byte) (time.Time, error) {
	scanner := bufio.NewScanner(bytes.NewReader(log))
	scanner.Buffer(make([]byte, 64<<10), 1<<20)
	for scanner.Scan() {
		stamp, line, _ := strings.Cut(scanner.Text(), " ")
		if strings.Contains(line, testguest.Marker) {
			return time.Parse(time.RFC3339Nano, stamp)
		}
	}
	return time.Time{}, scanner.Err()
}
