// Package handlerapi is what virt-api and virt-handler share about the stream API that every
// virt-handler serves to virt-api (the console today; port-forward and VNC later): its port,
// paths and websocket protocol, and the mutual TLS that guards it. virt-api makes the CA and
// both certificates (virtapi/certs); a handler accepts only a client certificate of that CA
// named ClientName, and virt-api only a server certificate named ServerName, so neither a pod
// nor another node's user can reach a guest's console without virt-api's authorization.
package handlerapi

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
)

const (
	// Port is where virt-handler serves streams on its pod IP (KubeVirt's console port).
	Port = 8186
	// ServerName is in the handlers' serving certificate; ClientName is virt-api's.
	ServerName = "virt-handler"
	ClientName = "virt-api"
	// ConsoleProtocol is the websocket subprotocol of a console: raw bytes of the serial line
	// in binary messages both ways (KubeVirt's name for it).
	ConsoleProtocol = "plain.kubevirt.io"

	// Secret keys of the handlers' certificate Secret.
	CABundleKey = "ca-bundle.crt"
	CertKey     = "tls.crt"
	KeyKey      = "tls.key"
)

// ConsolePath is the path of namespace/name's console on a handler.
func ConsolePath(namespace, name string) string { return instancePath(namespace, name, "console") }

// instancePath is the path of an instance's subresource sub on a handler (KubeVirt's paths).
func instancePath(namespace, name, sub string) string {
	return fmt.Sprintf("/v1/namespaces/%s/virtualmachineinstances/%s/%s", namespace, name, sub)
}

// instancePattern is instancePath as an http.ServeMux pattern for method.
func instancePattern(method, sub string) string {
	return method + " /v1/namespaces/{namespace}/virtualmachineinstances/{name}/" + sub
}

// ConsolePattern is ConsolePath as an http.ServeMux pattern.
const ConsolePattern = "GET /v1/namespaces/{namespace}/virtualmachineinstances/{name}/console"

// VNCPath is the path of namespace/name's display on a handler: RFB (the VNC protocol) in
// binary messages of ConsoleProtocol, as KubeVirt's.
func VNCPath(namespace, name string) string { return instancePath(namespace, name, "vnc") }

// VNCPattern is VNCPath as an http.ServeMux pattern.
var VNCPattern = instancePattern("GET", "vnc")

// ScreenshotPath is the path of namespace/name's display as a PNG image on a handler.
func ScreenshotPath(namespace, name string) string {
	return instancePath(namespace, name, "vnc/screenshot")
}

// ScreenshotPattern is ScreenshotPath as an http.ServeMux pattern.
var ScreenshotPattern = instancePattern("GET", "vnc/screenshot")

// NoDisplay is the refusal of VNC to a guest without a graphics device.
const NoDisplay = "the instance has no display: spec.domain.devices.autoattachGraphicsDevice is false"

// Material is a party's side of the mutual TLS: the CAs it trusts and its own pair.
type Material struct {
	CABundle  []byte
	Cert, Key []byte
}

func (m Material) parse() (*x509.CertPool, tls.Certificate, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(m.CABundle) {
		return nil, tls.Certificate{}, errors.New("no CA certificate in the bundle")
	}
	pair, err := tls.X509KeyPair(m.Cert, m.Key)
	return pool, pair, err
}

// ServerConfig is a handler's TLS: its serving pair, and only client certificates of the CA
// named ClientName.
func ServerConfig(m Material) (*tls.Config, error) {
	pool, pair, err := m.parse()
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		MinVersion:       tls.VersionTLS13,
		Certificates:     []tls.Certificate{pair},
		ClientAuth:       tls.RequireAndVerifyClientCert,
		ClientCAs:        pool,
		VerifyConnection: peerNamed(ClientName),
	}, nil
}

// ClientConfig is virt-api's TLS towards a handler: its client pair, and only a server
// certificate of the CA for ServerName (handlers are dialled by pod IP).
func ClientConfig(m Material) (*tls.Config, error) {
	pool, pair, err := m.parse()
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{pair},
		RootCAs:      pool,
		ServerName:   ServerName,
	}, nil
}

// peerNamed accepts a verified peer whose leaf is named cn: the CA signs the handlers'
// serving certificate too, which must not pass as virt-api.
func peerNamed(cn string) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 || cs.PeerCertificates[0].Subject.CommonName != cn {
			return fmt.Errorf("the peer is not %s", cn)
		}
		return nil
	}
}
