package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The API server's side: it trusts the printed authority for 127.0.0.1, and
// is answered only after the hold, allowed, with its request's uid.
func TestHoldsThenAllowsOverTLSItsAuthoritySigned(t *testing.T) {
	ca, err := newAuthority(net.ParseIP("127.0.0.1"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	srv := httptest.NewUnstartedServer(&hook{hold: 200 * time.Millisecond, out: &out})
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{ca.cert}}
	srv.StartTLS()
	defer srv.Close()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca.caPEM) {
		t.Fatal("the authority's PEM does not parse")
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	review := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: types.UID("u-1"), Name: "guarded", SubResource: "status",
			Kind: metav1.GroupVersionKind{Group: "drashift.io", Version: "v1alpha1", Kind: "MigrationPlan"}},
	}
	body, _ := json.Marshal(&review)
	start := time.Now()
	resp, err := client.Post(srv.URL, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("the API server's call over TLS: %v", err)
	}
	defer resp.Body.Close()
	if took := time.Since(start); took < 200*time.Millisecond {
		t.Errorf("answered after %v, before the 200ms hold", took)
	}
	var got admissionv1.AdmissionReview
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.Response == nil || !got.Response.Allowed || got.Response.UID != "u-1" || got.Request != nil {
		t.Errorf("answer %+v: want the request's uid, allowed, and no request", got.Response)
	}
	if want := "held MigrationPlan guarded/status\nreleased MigrationPlan guarded/status\n"; out.String() != want {
		t.Errorf("printed %q, want %q", out.String(), want)
	}
}

func TestRefusesWhatIsNotAReview(t *testing.T) {
	var out bytes.Buffer
	rec := httptest.NewRecorder()
	(&hook{out: &out}).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"kind":"Pod"}`)))
	if rec.Code != http.StatusBadRequest || out.Len() != 0 {
		t.Errorf("status %d, printed %q: want 400 and nothing held", rec.Code, out.String())
	}
}
