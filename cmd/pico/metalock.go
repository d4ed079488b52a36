//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// lockMetaFile takes an exclusive lock beside a SQLite metadata log
// (PATH.lock, holding the holder's pid) for as long as the process runs:
// two processes on one SQLite log would both take themselves for its only
// node, so the second refuses to start. The kernel drops the lock when the
// process ends, however it ends.
func lockMetaFile(path string) (release func(), err error) {
	f, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock the metadata log: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(path + ".lock")
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("the metadata log %s is in use by another pico serve (pid %s): SQLite serves one node; stop that one, or give this one its own --meta-url (Postgres for a cluster)",
				path, strings.TrimSpace(string(holder)))
		}
		return nil, fmt.Errorf("lock the metadata log: %w", err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() { f.Close() }, nil
}
