package workspace

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// ErrLocked is returned by AcquireLock when another process holds the
// owner lock.
var ErrLocked = errors.New("workspace owner lock is held by another process")

// Lock is the held owner lock (flock on .runtime/owner.lock). The kernel
// releases it when the process dies, so a crashed owner never leaves a
// stale lock behind.
type Lock struct {
	f *os.File
}

// AcquireLock takes the owner lock without waiting; ErrLocked when another
// process holds it.
func AcquireLock(l Layout) (*Lock, error) {
	if err := l.EnsureDirs(); err != nil {
		return nil, fmt.Errorf("owner lock: %w", err)
	}
	f, err := os.OpenFile(l.Lock, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("owner lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrLocked
		}
		return nil, fmt.Errorf("owner lock: %w", err)
	}
	return &Lock{f: f}, nil
}

// Release drops the lock. It is safe to call more than once.
func (k *Lock) Release() error {
	if k == nil || k.f == nil {
		return nil
	}
	_ = syscall.Flock(int(k.f.Fd()), syscall.LOCK_UN)
	err := k.f.Close()
	k.f = nil
	return err
}
