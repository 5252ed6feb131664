package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/vmctl/vmctl/vmctl"
)

// forwardResult is what vmctl's --forward costs against a direct connection to the guest.
type forwardResult struct {
	Requests             int     `json:"requests"`
	DirectP50Ms          float64 `json:"directP50Ms"`
	DirectP95Ms          float64 `json:"directP95Ms"`
	ForwardedP50Ms       float64 `json:"forwardedP50Ms"`
	ForwardedP95Ms       float64 `json:"forwardedP95Ms"`
	PayloadMiB           int     `json:"payloadMiB"`
	DirectMiBPerSec      float64 `json:"directMiBPerSec"`
	ForwardedMiBPerSec   float64 `json:"forwardedMiBPerSec"`
	ThroughputRatio      float64 `json:"throughputRatio"`
	AddedLatencyP50Ms    float64 `json:"addedLatencyP50Ms"`
	DirectAddress        string  `json:"directAddress"`
	ForwardingPodAddress string  `json:"forwardingPodAddress"`
}

// forwardPort is where the bench's vmctl pod listens, relaying to the guest's port 80.
const forwardPort = 8000

// forwardCost runs one vmctl pod with --forward and measures from this machine, alternating
// between the guest's own address and the pod's: requests GETs of the guest's page, each on
// a new connection (connect, request, answer), and three GETs of mib MiB (throughput).
func (b *bench) forwardCost(ctx context.Context, requests, mib int) (forwardResult, error) {
	r := forwardResult{Requests: requests, PayloadMiB: mib}
	pod := b.vmctlPod("vmctl-forward", fmt.Sprintf("--forward=%d:80", forwardPort))
	if _, err := b.kube.CoreV1().Pods(b.namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return r, err
	}
	clone := vmctl.CloneName(b.proto.Name, pod.Name)
	if err := b.waitVMIRunning(ctx, clone); err != nil {
		return r, err
	}
	// The two addresses; whether the guest answers on them is the warm-up's to find out.
	err := wait.PollUntilContextCancel(ctx, poll, true, func(ctx context.Context) (bool, error) {
		got, err := b.kube.CoreV1().Pods(b.namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil || got.Status.PodIP == "" {
			return false, err
		}
		vmi, err := b.virt.KubevirtV1().VirtualMachineInstances(b.namespace).Get(ctx, clone, metav1.GetOptions{})
		if err != nil || len(vmi.Status.Interfaces) == 0 || vmi.Status.Interfaces[0].IP == "" {
			return false, err
		}
		r.DirectAddress = net.JoinHostPort(vmi.Status.Interfaces[0].IP, "80")
		r.ForwardingPodAddress = net.JoinHostPort(got.Status.PodIP, strconv.Itoa(forwardPort))
		return true, nil
	})
	if err != nil {
		return r, err
	}
	direct, forwarded := "http://"+r.DirectAddress, "http://"+r.ForwardingPodAddress
	// A fresh connection per request: the connection's setup through the relay is part of
	// what a client pays.
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{DisableKeepAlives: true}}
	// Both paths answer before anything is timed: the guest serves HTTP once booted, and a new
	// pod's address may take a moment to be reachable from this machine (its neighbour entry
	// on the node).
	err = wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, errDirect := timedGet(ctx, client, direct+"/")
		_, errForwarded := timedGet(ctx, client, forwarded+"/")
		return errDirect == nil && errForwarded == nil, nil
	})
	if err != nil {
		return r, fmt.Errorf("the guest does not answer at %s and %s: %w", direct, forwarded, err)
	}
	var viaGuest, viaPod []time.Duration
	for range requests {
		d, err := timedGet(ctx, client, direct+"/")
		if err != nil {
			return r, err
		}
		f, err := timedGet(ctx, client, forwarded+"/")
		if err != nil {
			return r, err
		}
		viaGuest, viaPod = append(viaGuest, d), append(viaPod, f)
	}
	r.DirectP50Ms, r.DirectP95Ms = ms(percentile(viaGuest, 50)), ms(percentile(viaGuest, 95))
	r.ForwardedP50Ms, r.ForwardedP95Ms = ms(percentile(viaPod, 50)), ms(percentile(viaPod, 95))
	r.AddedLatencyP50Ms = r.ForwardedP50Ms - r.DirectP50Ms
	var guestBulk, podBulk []time.Duration
	for range 3 {
		d, err := timedGet(ctx, client, fmt.Sprintf("%s/cgi-bin/bytes?%d", direct, mib))
		if err != nil {
			return r, err
		}
		f, err := timedGet(ctx, client, fmt.Sprintf("%s/cgi-bin/bytes?%d", forwarded, mib))
		if err != nil {
			return r, err
		}
		guestBulk, podBulk = append(guestBulk, d), append(podBulk, f)
	}
	r.DirectMiBPerSec = float64(mib) / median(guestBulk).Seconds()
	r.ForwardedMiBPerSec = float64(mib) / median(podBulk).Seconds()
	r.ThroughputRatio = r.ForwardedMiBPerSec / r.DirectMiBPerSec
	if err := b.kube.CoreV1().Pods(b.namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{}); err != nil {
		return r, err
	}
	return r, b.waitGone(ctx, clone)
}

// timedGet fetches url whole and times it; an answer other than 200 is an error.
func timedGet(ctx context.Context, client *http.Client, url string) (time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return time.Since(start), nil
}

func percentile(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func (r forwardResult) table() string {
	return fmt.Sprintf(`
| vmctl --forward %d:80, from this machine | to the guest directly | through the vmctl pod | cost |
| --- | --- | --- | --- |
| GET of the guest's page on a new connection, P50 / P95 of %d | %.2f / %.2f ms | %.2f / %.2f ms | %+.2f ms at P50 |
| GET of %d MiB, median of 3 | %.1f MiB/s | %.1f MiB/s | %.2fx the throughput |
`, forwardPort, r.Requests, r.DirectP50Ms, r.DirectP95Ms, r.ForwardedP50Ms, r.ForwardedP95Ms, r.AddedLatencyP50Ms,
		r.PayloadMiB, r.DirectMiBPerSec, r.ForwardedMiBPerSec, r.ThroughputRatio)
}
