package certs

import (
	"crypto/x509"
	"testing"
	"time"
)

var names = []string{"virt-api.kubevirt.svc", "virt-api.kubevirt.svc.cluster.local"}

func TestRenew(t *testing.T) {
	now := time.Now()
	if !(Bundle{}).NeedsRenewal(names, now) {
		t.Fatal("an empty bundle needs no renewal")
	}
	b, err := Renew(Bundle{}, names, now)
	if err != nil {
		t.Fatal(err)
	}
	if b.NeedsRenewal(names, now) {
		t.Fatal("a fresh bundle needs renewal")
	}
	if !b.NeedsRenewal([]string{"other.svc"}, now) {
		t.Fatal("a bundle for other names needs no renewal")
	}
	// The serving certificate verifies against the bundle for each name.
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(b.CABundle)
	cert, _ := parseCert(b.Cert)
	for _, n := range names {
		if _, err := cert.Verify(x509.VerifyOptions{DNSName: n, Roots: pool, CurrentTime: now}); err != nil {
			t.Fatalf("verify %s: %v", n, err)
		}
	}

	// Two thirds into the serving certificate's life: renewed, same CA.
	later := now.Add(ServingLifetime * 7 / 10)
	if !b.NeedsRenewal(names, later) {
		t.Fatal("an aging certificate is not renewed")
	}
	r, err := Renew(b, names, later)
	if err != nil {
		t.Fatal(err)
	}
	if string(r.CACert) != string(b.CACert) || string(r.Cert) == string(b.Cert) || string(r.CABundle) != string(b.CACert) {
		t.Fatal("serving renewal changed the CA or kept the certificate")
	}

	// Near the CA's end: a new CA, and the bundle trusts both until the old one expires.
	end := now.Add(CALifetime * 9 / 10)
	r, err = Renew(b, names, end)
	if err != nil {
		t.Fatal(err)
	}
	if string(r.CACert) == string(b.CACert) || len(r.CABundle) <= len(r.CACert) {
		t.Fatal("CA rotation did not keep the old CA in the bundle")
	}
}
