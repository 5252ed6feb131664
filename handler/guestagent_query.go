package handler

import (
	"context"
	"encoding/json"
	"net/http"

	"k8s.io/klog/v2"

	"github.com/vmctl/vmctl/handler/guestagent"
	"github.com/vmctl/vmctl/pkg/handlerapi"
)

// guestQuery serves q for virt-api: the guest agent's report, read now, as KubeVirt's JSON.
// As a lifecycle operation, on the request's goroutine and a libvirt connection of its own,
// every call bounded (libvirt gives an agent 5 s); one query per instance at a time.
func (s *StreamServer) guestQuery(q handlerapi.Query) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		namespace, name := r.PathValue("namespace"), r.PathValue("name")
		busy := namespace + "/" + name + "/guest-agent"
		if !s.begin(busy) {
			http.Error(w, "another guest agent query of the instance is in progress", http.StatusConflict)
			return
		}
		defer s.end(busy)
		report, err := s.Controller.guestReport(r.Context(), namespace, name)
		if err != nil {
			status := errorStatus(err)
			klog.InfoS("guest agent query refused", "query", q, "vmi", namespace+"/"+name, "status", status, "err", err)
			http.Error(w, err.Error(), status)
			return
		}
		var body any
		switch q {
		case handlerapi.GuestOSInfo:
			body = report.AgentInfo()
		case handlerapi.UserList:
			body = report.UserList()
		case handlerapi.FileSystemList:
			body = report.FileSystemList()
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(body)
	}
}

// guestReport asks namespace/name's guest agent through its launcher's libvirtd.
func (c *Controller) guestReport(ctx context.Context, namespace, name string) (guestagent.Report, error) {
	vmi, lv, err := c.dialRunning(ctx, namespace, name)
	if err != nil {
		return guestagent.Report{}, err
	}
	defer func() { go closeQuietly(lv) }()
	params, err := lv.GuestInfo(DomainName(vmi))
	if err != nil {
		return guestagent.Report{}, agentRefusal(err)
	}
	return guestagent.Parse(params), nil
}
