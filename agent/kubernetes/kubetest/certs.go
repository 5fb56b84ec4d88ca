package kubetest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki is the cluster's certificates: a CA that signs the apiserver's
// serving certificate and the admin's client certificate (group
// system:masters), and the service accounts' signing key.
type pki struct {
	ca, caKey, serving, servingKey, admin, adminKey, saKey, saPub string
}

func writePKI(dir string) (pki, error) {
	p := pki{
		ca: filepath.Join(dir, "ca.crt"), caKey: filepath.Join(dir, "ca.key"),
		serving: filepath.Join(dir, "apiserver.crt"), servingKey: filepath.Join(dir, "apiserver.key"),
		admin: filepath.Join(dir, "admin.crt"), adminKey: filepath.Join(dir, "admin.key"),
		saKey: filepath.Join(dir, "sa.key"), saPub: filepath.Join(dir, "sa.pub"),
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return p, err
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "helix-org-test-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return p, err
	}
	caCert, _ := x509.ParseCertificate(caDER)
	if err := writePEM(p.ca, "CERTIFICATE", caDER); err != nil {
		return p, err
	}
	if err := writeKey(p.caKey, caKey); err != nil {
		return p, err
	}
	leaf := func(serial int64, subject pkix.Name, usage x509.ExtKeyUsage, certPath, keyPath string) error {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return err
		}
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: subject, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.0.0.1")}, DNSNames: []string{"localhost", "kubernetes.default.svc"}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
		if err != nil {
			return err
		}
		if err := writePEM(certPath, "CERTIFICATE", der); err != nil {
			return err
		}
		return writeKey(keyPath, key)
	}
	if err := leaf(2, pkix.Name{CommonName: "kube-apiserver"}, x509.ExtKeyUsageServerAuth, p.serving, p.servingKey); err != nil {
		return p, err
	}
	if err := leaf(3, pkix.Name{CommonName: "admin", Organization: []string{"system:masters"}}, x509.ExtKeyUsageClientAuth, p.admin, p.adminKey); err != nil {
		return p, err
	}
	sa, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return p, err
	}
	if err := writePEM(p.saKey, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(sa)); err != nil {
		return p, err
	}
	pub, err := x509.MarshalPKIXPublicKey(&sa.PublicKey)
	if err != nil {
		return p, err
	}
	return p, writePEM(p.saPub, "PUBLIC KEY", pub)
}

func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	return writePEM(path, "EC PRIVATE KEY", der)
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}
