//go:build linux

package main

import "syscall"

// raiseFileLimit raises the open-file soft limit to the hard limit, since
// every connection, live reader and store request holds a descriptor and
// the soft default (often 1024) is far below what a node serves; it
// returns the limit in force. Go's runtime raises it for itself as well;
// doing it here states the need, and the caps derive from the result.
func raiseFileLimit() (uint64, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, err
	}
	if lim.Cur < lim.Max {
		raised := lim
		raised.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err != nil {
			return lim.Cur, err
		}
		lim = raised
	}
	return lim.Cur, nil
}
