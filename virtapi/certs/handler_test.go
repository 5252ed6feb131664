package certs

import (
	"crypto/tls"
	"net"
	"testing"
	"time"

	"github.com/vmctl/vmctl/pkg/handlerapi"
)

// The mutual TLS of virt-api and virt-handler admits virt-api's client certificate only: not
// the handlers' own serving certificate (same CA), nor a client of another CA.
func TestHandlerMutualTLS(t *testing.T) {
	now := time.Now()
	b, err := Renew(Bundle{}, []string{handlerapi.ServerName}, now)
	if err != nil {
		t.Fatal(err)
	}
	other, err := Renew(Bundle{}, []string{handlerapi.ServerName}, now)
	if err != nil {
		t.Fatal(err)
	}
	client := func(ca Bundle, cn string) handlerapi.Material {
		cert, key, err := IssueClient(ca, cn, now)
		if err != nil {
			t.Fatal(err)
		}
		return handlerapi.Material{CABundle: b.CABundle, Cert: cert, Key: key}
	}
	server := handlerapi.Material{CABundle: b.CABundle, Cert: b.Cert, Key: b.Key}
	tests := []struct {
		name   string
		client handlerapi.Material
		ok     bool
	}{
		{"virt-api", client(b, handlerapi.ClientName), true},
		{"another name", client(b, "someone"), false},
		{"the handlers' own certificate", handlerapi.Material{CABundle: b.CABundle, Cert: b.Cert, Key: b.Key}, false},
		{"another CA", client(other, handlerapi.ClientName), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := handshake(t, server, tt.client); (err == nil) != tt.ok {
				t.Errorf("handshake: %v, want success %v", err, tt.ok)
			}
		})
	}
}

func handshake(t *testing.T, server, client handlerapi.Material) error {
	scfg, err := handlerapi.ServerConfig(server)
	if err != nil {
		t.Fatal(err)
	}
	ccfg, err := handlerapi.ClientConfig(client)
	if err != nil {
		t.Fatal(err)
	}
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
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
