package handlerapi

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
)

// The handlers also talk to each other, to carry a live migration between the launcher pods of
// two nodes. They reuse their serving pair both ways rather than getting a second certificate:
// each handler is a client of the other with the same pair it serves virt-api with.

// PeerServerConfig is a handler's TLS towards another handler: its pair, and only a peer
// presenting the handlers' certificate of the CA. The handlers' certificate is for ServerAuth
// only, which crypto/tls's own client verification (it wants ClientAuth) would refuse, so the
// chain is verified here instead.
func PeerServerConfig(m Material) (*tls.Config, error) {
	pool, pair, err := m.parse()
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		MinVersion:            tls.VersionTLS13,
		Certificates:          []tls.Certificate{pair},
		ClientAuth:            tls.RequireAnyClientCert,
		VerifyPeerCertificate: verifyHandler(pool),
	}, nil
}

// PeerClientConfig is a handler's TLS when dialling another handler (by pod IP): its pair as
// the client certificate, and only a server certificate of the CA for ServerName, as virt-api
// dials a handler.
func PeerClientConfig(m Material) (*tls.Config, error) { return ClientConfig(m) }

// verifyHandler accepts a client chain that leads to pool with a leaf for ServerAuth named
// ServerName: virt-api's client certificate comes from the same CA and must not pass as a
// handler, since it would then reach the launcher pods' sockets.
func verifyHandler(pool *x509.CertPool) func([][]byte, [][]*x509.Certificate) error {
	return func(raw [][]byte, _ [][]*x509.Certificate) error {
		if len(raw) == 0 {
			return errors.New("no client certificate")
		}
		certs := make([]*x509.Certificate, len(raw))
		for i, der := range raw {
			c, err := x509.ParseCertificate(der)
			if err != nil {
				return fmt.Errorf("client certificate: %w", err)
			}
			certs[i] = c
		}
		inter := x509.NewCertPool()
		for _, c := range certs[1:] {
			inter.AddCert(c)
		}
		leaf := certs[0]
		if _, err := leaf.Verify(x509.VerifyOptions{
			Roots:         pool,
			Intermediates: inter,
			KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		}); err != nil {
			return fmt.Errorf("client certificate: %w", err)
		}
		if leaf.Subject.CommonName != ServerName {
			return fmt.Errorf("the peer is %q, not %s", leaf.Subject.CommonName, ServerName)
		}
		return nil
	}
}
