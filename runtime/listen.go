package runtime

import (
	"bytes"
	"net"
	"os"

	"github.com/tychora/tychora/workspace"
)

// maxListenFileBytes bounds what readLastListen reads of .runtime/listen.
const maxListenFileBytes = 128

// listen opens the owner's listener on addr. When addr leaves the port to
// the system (port 0), the address the last owner used on the same host
// comes first, so that a URL printed earlier (mcp-config --http) survives
// a restart; when that port is taken, any free one is used. The address
// listened on is recorded for the next owner.
func listen(l workspace.Layout, addr string) (net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port != "0" {
		return net.Listen("tcp", addr)
	}
	if last := readLastListen(l); last != "" {
		if lastHost, _, _ := net.SplitHostPort(last); lastHost == host {
			if ln, err := net.Listen("tcp", last); err == nil {
				return ln, nil
			}
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	// Losing the record only costs the next owner its port.
	_ = l.EnsureDirs()
	_ = workspace.WriteFileAtomic(l.LastListen, []byte(ln.Addr().String()+"\n"), 0o600)
	return ln, nil
}

// readLastListen is the address recorded in .runtime/listen, or "" when
// there is none or it is not a loopback address with a port.
func readLastListen(l workspace.Layout) string {
	f, err := os.Open(l.LastListen)
	if err != nil {
		return ""
	}
	defer f.Close()
	buf := make([]byte, maxListenFileBytes+1)
	n, _ := f.Read(buf)
	if n > maxListenFileBytes {
		return ""
	}
	addr := string(bytes.TrimSpace(buf[:n]))
	if workspace.CheckListen(addr) != nil {
		return ""
	}
	if _, port, _ := net.SplitHostPort(addr); port == "0" {
		return ""
	}
	return addr
}
