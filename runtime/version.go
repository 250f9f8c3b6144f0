// Package runtime (imported as tyruntime where it meets the standard
// library's) owns the owner's life: taking the lock, opening storage,
// listening on loopback, publishing endpoint.json, the in-process Service,
// ConnectLocal and OpenLocal, and the ordered shutdown.
package runtime

// Version is tychora's version; release builds set it with
// -ldflags "-X github.com/tychora/tychora/runtime.Version=v1.2.3".
var Version = "0.1.0-dev"
