package runtime

import (
	"net"
	"os"
	"testing"

	"github.com/tychora/tychora/workspace"
)

// FuzzReadLastListen: whatever .runtime/listen holds, the address read
// from it is "" or a loopback address with a port other than 0.
func FuzzReadLastListen(f *testing.F) {
	for _, s := range []string{"127.0.0.1:41234\n", "[::1]:7419", "0.0.0.0:80", "127.0.0.1:0", "example.com:80", "", "127.0.0.1:99999", "  127.0.0.1:1  \n\n"} {
		f.Add([]byte(s))
	}
	l := workspace.NewLayout(f.TempDir())
	if err := l.EnsureDirs(); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := os.WriteFile(l.LastListen, b, 0o600); err != nil {
			t.Fatal(err)
		}
		addr := readLastListen(l)
		if addr == "" {
			return
		}
		_, port, err := net.SplitHostPort(addr)
		if workspace.CheckListen(addr) != nil || err != nil || port == "0" {
			t.Fatalf("%q read as %q", b, addr)
		}
	})
}

// TestListenKeepsPort: port 0 gets the recorded port while it is free, and
// any other when it is taken; a record on another host or not on loopback
// is ignored.
func TestListenKeepsPort(t *testing.T) {
	l := workspace.NewLayout(t.TempDir())
	if err := l.EnsureDirs(); err != nil {
		t.Fatal(err)
	}
	first, err := listen(l, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := first.Addr().String()
	first.Close()
	again, err := listen(l, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if again.Addr().String() != addr {
		t.Fatalf("restart listens on %s, last on %s", again.Addr(), addr)
	}
	// Taken: another port, which becomes the record.
	other, err := listen(l, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	again.Close()
	if other.Addr().String() == addr || readLastListen(l) != other.Addr().String() {
		t.Fatalf("port taken: listens on %s (last %s), record %q", other.Addr(), addr, readLastListen(l))
	}
	for _, rec := range []string{"0.0.0.0:" + portOf(t, addr), "[::1]:" + portOf(t, addr)} {
		if err := os.WriteFile(l.LastListen, []byte(rec), 0o600); err != nil {
			t.Fatal(err)
		}
		ln, err := listen(l, "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		host, _, _ := net.SplitHostPort(ln.Addr().String())
		ln.Close()
		if host != "127.0.0.1" {
			t.Fatalf("record %q: listened on %s", rec, ln.Addr())
		}
	}
}

func portOf(t *testing.T, addr string) string {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return port
}
