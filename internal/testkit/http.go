package testkit

import (
	"io"
	"net/http"
	"testing"
)

// Request is one raw HTTP request of a test.
type Request struct {
	Method, URL string
	// Token is sent as a bearer token; "" sends none.
	Token string
	// Header is set on the request; a value "" deletes the header (one
	// Go's client would add), and "Host" sets the request's Host.
	Header map[string]string
	// Body is the request body; nil sends none.
	Body io.Reader
}

// Do sends r with http.DefaultClient under the test's context and
// returns the status, the headers and the whole body. A request that gets
// no response fails the test.
func Do(t testing.TB, r Request) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), r.Method, r.URL, r.Body)
	if err != nil {
		t.Fatal(err)
	}
	if r.Token != "" {
		req.Header.Set("Authorization", "Bearer "+r.Token)
	}
	for k, v := range r.Header {
		switch {
		case k == "Host":
			req.Host = v
		case v == "":
			req.Header.Del(k)
		default:
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read the body: %v", r.Method, r.URL, err)
	}
	return resp.StatusCode, resp.Header, b
}

// Bearer is a RoundTripper that sends Token as a bearer token with every
// request through Next (http.DefaultTransport when nil).
type Bearer struct {
	Token string
	Next  http.RoundTripper
}

// RoundTrip sends a copy of r with the Authorization header set.
func (b Bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	next := b.Next
	if next == nil {
		next = http.DefaultTransport
	}
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.Token)
	return next.RoundTrip(r)
}
