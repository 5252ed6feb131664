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
// alike. It polls the pods whose guests have not printed it yet, and gives up on them once no
// guest has printed its marker for stall: one guest that hangs in its boot must not hold the
// whole run until its timeout. It returns the pods it gave up on, which the figures leave out.
func (b *bench) markers(ctx context.Context, ns string, w *watcher, samples []sample, stall time.Duration) ([]string, error) {
	for i := range samples {
		if samples[i].pod == "" {
			samples[i].pod = w.podOf(samples[i].name)
		}
	}
	progress := time.Now()
	for {
		var missing []string
		for i := range samples {
			s := &samples[i]
			if !s.marker.IsZero() {
				continue
			}
			at, err := b.markerAt(ctx, ns, s.pod)
			if err != nil {
				klog.V(2).InfoS("no console yet", "pod", s.pod, "err", err)
			}
			if s.marker = at; at.IsZero() {
				missing = append(missing, s.pod)
			} else {
				progress = time.Now()
			}
		}
		if len(missing) == 0 {
			return nil, nil
		}
		if time.Since(progress) > stall {
			klog.ErrorS(nil, "giving up on guests that printed no marker", "since", stall, "pods", missing)
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

// markerPoll is the pause between two reads of the pods still booting. The times come from the
// log lines, so it bounds only how soon the wait ends, while each read costs the API server and
// the kubelet a little of the CPU the guests are booting on.
const markerPoll = 15 * time.Second

// markerAt is when the pod's guest printed its marker, zero if it has not yet.
func (b *bench) markerAt(ctx context.Context, ns, pod string) (time.Time, error) {
	if pod == "" {
		return time.Time{}, nil
	}
	raw, err := b.kube.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{Container: vmi.GuestConsoleLogContainer, Timestamps: true}).DoRaw(ctx)
	if err != nil {
		return time.Time{}, err
	}
	return markerIn(raw)
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
