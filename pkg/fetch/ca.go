package fetch

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
)

// LoadCAFile returns the system's trusted roots with the certificates of the
// PEM file at path added (-ca-file): an intranet's private CA is trusted
// besides the public ones, not instead of them. SSL_CERT_FILE and
// SSL_CERT_DIR, which Go reads for the system's roots, still apply to those.
func LoadCAFile(path string) (*x509.CertPool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("CA file: %w", err)
	}
	certs, err := ParseCAs(data)
	if err != nil {
		return nil, fmt.Errorf("CA file %s: %w", path, err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		return nil, fmt.Errorf("CA file %s: read the system's roots to add to: %w", path, err)
	}
	for _, c := range certs {
		pool.AddCert(c)
	}
	return pool, nil
}

// ErrNoCertificate is returned by ParseCAs for input without a CERTIFICATE
// block: a key, a DER file or the wrong file given as a CA file.
var ErrNoCertificate = errors.New("no PEM certificate in it")

// ParseCAs returns the certificates of the PEM CERTIFICATE blocks of data.
// Other blocks are skipped, as a bundle may carry them; a CERTIFICATE block
// that does not parse is an error naming it, where
// x509.CertPool.AppendCertsFromPEM would skip it and leave the operator
// wondering why the CA is not trusted.
func ParseCAs(data []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	for n := 1; ; {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("certificate %d: %w", n, err)
		}
		certs = append(certs, c)
		n++
	}
	if len(certs) == 0 {
		return nil, ErrNoCertificate
	}
	return certs, nil
}
