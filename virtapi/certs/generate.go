// Package certs makes and keeps virt-api's TLS material without cert-manager: a self-signed
// CA and a serving certificate for the virt-api Service's DNS names, kept in one Secret that
// every replica shares, rotated before expiry, and the CA bundle injected into the webhook
// configurations and the APIService that trust it.
package certs

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"time"
)

// Keys of the Secret.
const (
	CAKey   = "ca.crt"
	CAKeyPK = "ca.key"
	TLSCert = "tls.crt"
	TLSKey  = "tls.key"
	// CABundleKey holds every CA still trusted: the current one, and the previous one during
	// a CA rotation, so clients holding the old bundle keep working until re-injection.
	CABundleKey = "ca-bundle.crt"
)

// Lifetimes: a CA lasts long, serving certificates are short-lived and renewed when a third
// of their life is left.
var (
	CALifetime      = 5 * 365 * 24 * time.Hour
	ServingLifetime = 90 * 24 * time.Hour
)

// Bundle is the Secret's content, parsed.
type Bundle struct {
	CACert, CAKey, Cert, Key, CABundle []byte
}

func (b Bundle) data() map[string][]byte {
	return map[string][]byte{CAKey: b.CACert, CAKeyPK: b.CAKey, TLSCert: b.Cert, TLSKey: b.Key, CABundleKey: b.CABundle}
}

func fromData(d map[string][]byte) Bundle {
	return Bundle{CACert: d[CAKey], CAKey: d[CAKeyPK], Cert: d[TLSCert], Key: d[TLSKey], CABundle: d[CABundleKey]}
}

// NeedsRenewal says whether the bundle is missing, broken, for other names, or has less than
// a third of its life left, at time now.
func (b Bundle) NeedsRenewal(dnsNames []string, now time.Time) bool {
	ca, err := parseCert(b.CACert)
	if err != nil || nearExpiry(ca, now) {
		return true
	}
	cert, err := parseCert(b.Cert)
	if err != nil || nearExpiry(cert, now) || cert.CheckSignatureFrom(ca) != nil {
		return true
	}
	for _, n := range dnsNames {
		if cert.VerifyHostname(n) != nil {
			return true
		}
	}
	return len(b.Key) == 0 || len(b.CAKey) == 0
}

func nearExpiry(c *x509.Certificate, now time.Time) bool {
	life := c.NotAfter.Sub(c.NotBefore)
	return now.After(c.NotAfter.Add(-life / 3))
}

// Renew returns a bundle valid for dnsNames: a new serving certificate, signed by the
// existing CA while that has life left, else by a new CA (kept in the bundle next to the
// old one).
func Renew(old Bundle, dnsNames []string, now time.Time) (Bundle, error) {
	caCert, caKey, err := parseCA(old)
	if err != nil || nearExpiry(caCert, now) {
		if caCert, caKey, err = newCA(now); err != nil {
			return Bundle{}, err
		}
	}
	b := Bundle{CACert: encodeCert(caCert.Raw)}
	if b.CAKey, err = encodeKey(caKey); err != nil {
		return Bundle{}, err
	}
	b.CABundle = b.CACert
	if prev, err := parseCert(old.CACert); err == nil && !prev.Equal(caCert) && now.Before(prev.NotAfter) {
		b.CABundle = append(append([]byte{}, b.CACert...), old.CACert...)
	}
	b.Cert, b.Key, err = issue(caCert, caKey, &x509.Certificate{
		Subject:     pkix.Name{CommonName: dnsNames[0]},
		DNSNames:    dnsNames,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, now)
	return b, err
}

// IssueClient makes a client certificate named cn, signed by the bundle's CA.
func IssueClient(b Bundle, cn string, now time.Time) (cert, key []byte, err error) {
	caCert, caKey, err := parseCA(b)
	if err != nil {
		return nil, nil, err
	}
	return issue(caCert, caKey, &x509.Certificate{
		Subject:     pkix.Name{CommonName: cn},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, now)
}

// issue signs a new key's certificate from tmpl (names and usage), valid for ServingLifetime.
func issue(caCert *x509.Certificate, caKey *ecdsa.PrivateKey, tmpl *x509.Certificate, now time.Time) (cert, key []byte, err error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl.SerialNumber = serial()
	tmpl.NotBefore = now.Add(-time.Minute)
	tmpl.NotAfter = now.Add(ServingLifetime)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &k.PublicKey, caKey)
	if err != nil {
		return nil, nil, err
	}
	key, err = encodeKey(k)
	return encodeCert(der), key, err
}

func newCA(now time.Time) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: fmt.Sprintf("virt-api-ca@%d", now.Unix())},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(CALifetime),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	return cert, key, err
}

func parseCA(b Bundle) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	cert, err := parseCert(b.CACert)
	if err != nil {
		return nil, nil, err
	}
	block, _ := pem.Decode(b.CAKey)
	if block == nil {
		return nil, nil, errors.New("no CA key")
	}
	key, err := x509.ParseECPrivateKey(block.Bytes)
	if err != nil {
		return nil, nil, err
	}
	if !key.PublicKey.Equal(cert.PublicKey) {
		return nil, nil, errors.New("CA key does not match CA certificate")
	}
	return cert, key, nil
}

func parseCert(pemBytes []byte) (*x509.Certificate, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errors.New("no certificate")
	}
	return x509.ParseCertificate(block.Bytes)
}

func encodeCert(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func encodeKey(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return n
}

// Equal says whether two bundles hold the same serving material.
func (b Bundle) Equal(o Bundle) bool {
	return bytes.Equal(b.Cert, o.Cert) && bytes.Equal(b.Key, o.Key) && bytes.Equal(b.CABundle, o.CABundle)
}
