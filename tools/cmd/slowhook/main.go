// slowhook is a validating admission webhook that holds each request it is
// sent for a while, then allows it: a test registers it for one kind of write
// (say, MigrationPlan status updates) to keep such a write in flight, as an
// API server under load does, and watches what the writer does meanwhile. It
// makes its own certificate authority and a serving certificate for
// 127.0.0.1, and prints, once it accepts:
//
//	listening ADDR
//	ca BASE64          (the PEM of its authority: the webhook's caBundle)
//
// then, for each request, "held KIND NAME/SUBRESOURCE" when it starts holding
// it and "released KIND NAME/SUBRESOURCE" when it answers.
//
//	slowhook --listen 127.0.0.1:0 --hold 8s
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// authority is a certificate authority and the serving certificate it signed.
type authority struct {
	caPEM []byte
	cert  tls.Certificate
}

func newAuthority(host net.IP, now time.Time) (*authority, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "slowhook authority"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: host.String()},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{host},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	return &authority{
		caPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		cert:  tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key},
	}, nil
}

// hook answers AdmissionReviews: each one allowed after hold.
type hook struct {
	hold time.Duration
	mu   sync.Mutex
	out  io.Writer
}

func (h *hook) say(format string, a ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	fmt.Fprintf(h.out, format+"\n", a...)
}

func (h *hook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(io.LimitReader(r.Body, 8<<20)).Decode(&review); err != nil || review.Request == nil {
		http.Error(w, fmt.Sprintf("not an AdmissionReview: %v", err), http.StatusBadRequest)
		return
	}
	req := review.Request
	what := fmt.Sprintf("%s %s/%s", req.Kind.Kind, req.Name, req.SubResource)
	h.say("held %s", what)
	select {
	case <-time.After(h.hold):
	case <-r.Context().Done():
		h.say("abandoned %s: %v", what, r.Context().Err())
		return
	}
	review.Response = &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true,
		Result: &metav1.Status{Message: "held " + h.hold.String()}}
	review.Request = nil
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(&review); err != nil {
		h.say("answer to %s not sent: %v", what, err)
		return
	}
	h.say("released %s", what)
}

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to serve on (loopback)")
	hold := flag.Duration("hold", 8*time.Second, "how long each request is held before it is allowed")
	flag.Parse()
	host, _, err := net.SplitHostPort(*listen)
	ip := net.ParseIP(host)
	if err != nil || ip == nil {
		fmt.Fprintf(os.Stderr, "slowhook: --listen %q: want IP:PORT\n", *listen)
		os.Exit(2)
	}
	ca, err := newAuthority(ip, time.Now())
	if err != nil {
		fmt.Fprintf(os.Stderr, "slowhook: certificates: %v\n", err)
		os.Exit(1)
	}
	ln, err := tls.Listen("tcp", *listen, &tls.Config{Certificates: []tls.Certificate{ca.cert}, MinVersion: tls.VersionTLS12})
	if err != nil {
		fmt.Fprintf(os.Stderr, "slowhook: %v\n", err)
		os.Exit(1)
	}
	h := &hook{hold: *hold, out: os.Stdout}
	h.say("listening %s", ln.Addr())
	h.say("ca %s", base64.StdEncoding.EncodeToString(ca.caPEM))
	if err := http.Serve(ln, h); err != nil {
		fmt.Fprintf(os.Stderr, "slowhook: %v\n", err)
		os.Exit(1)
	}
}
