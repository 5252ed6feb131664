package handlerapi_test

import (
	"crypto/tls"
	"net"
	"testing"
	"time"

	"github.com/vmctl/vmctl/pkg/handlerapi"
	"github.com/vmctl/vmctl/virtapi/certs"
)

// Handlers admit each other with their shared serving pair, and nobody else: not virt-api's
// client certificate (same CA), nor a handler of another CA.
func TestPeerMutualTLS(t *testing.T) {
	now := time.Now()
	b, err := certs.Renew(certs.Bundle{}, []string{handlerapi.ServerName}, now)
	if err != nil {
		t.Fatal(err)
	}
	other, err := certs.Renew(certs.Bundle{}, []string{handlerapi.ServerName}, now)
	if err != nil {
		t.Fatal(err)
	}
	issued := func(cn string) handlerapi.Material {
		cert, key, err := certs.IssueClient(b, cn, now)
		if err != nil {
			t.Fatal(err)
		}
		return handlerapi.Material{CABundle: b.CABundle, Cert: cert, Key: key}
	}
	handler := handlerapi.Material{CABundle: b.CABundle, Cert: b.Cert, Key: b.Key}
	// A serving certificate of the same CA under another name (Renew keeps a CA with life left).
	renamed, err := certs.Renew(b, []string{handlerapi.ClientName}, now)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		client handlerapi.Material
		ok     bool
	}{
		{"another handler", handler, true},
		{"virt-api", issued(handlerapi.ClientName), false},
		// Named like a handler but for ClientAuth only: not the handlers' certificate.
		{"a client certificate named virt-handler", issued(handlerapi.ServerName), false},
		{"a serving certificate named virt-api", handlerapi.Material{CABundle: b.CABundle, Cert: renamed.Cert, Key: renamed.Key}, false},
		{"a handler of another CA", handlerapi.Material{CABundle: b.CABundle, Cert: other.Cert, Key: other.Key}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := peerHandshake(t, handler, tt.client)
			if (err == nil) != tt.ok {
				t.Errorf("handshake: %v, want success %v", err, tt.ok)
			}
		})
	}
}

func peerHandshake(t *testing.T, server, client handlerapi.Material) error {
	scfg, err := handlerapi.PeerServerConfig(server)
	if err != nil {
		t.Fatal(err)
	}
	ccfg, err := handlerapi.PeerClientConfig(client)
	if err != nil {
		t.Fatal(err)
	}
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	deadline := time.Now().Add(10 * time.Second)
	a.SetDeadline(deadline)
	b.SetDeadline(deadline)
	srv := make(chan error, 1)
	go func() {
		conn := tls.Server(a, scfg)
		err := conn.Handshake()
		if err == nil {
			// TLS 1.3: the server's verdict on the client reaches the client with the first read.
			_, err = conn.Write([]byte{1})
		}
		srv <- err
		conn.Close()
	}()
	conn := tls.Client(b, ccfg)
	err = conn.Handshake()
	if err == nil {
		_, err = conn.Read(make([]byte, 1))
	}
	if serr := <-srv; serr != nil {
		return serr
	}
	return err
}

func TestPeerConfigBadMaterial(t *testing.T) {
	for _, f := range []func(handlerapi.Material) (*tls.Config, error){handlerapi.PeerServerConfig, handlerapi.PeerClientConfig} {
		if _, err := f(handlerapi.Material{}); err == nil {
			t.Error("empty material accepted")
		}
	}
}
