//go:build !linux

package main

// raiseFileLimit leaves the limit alone where it is not Linux's to raise
// this way; 0 says it is unknown, so --max-connections auto sets no cap.
func raiseFileLimit() (uint64, error) { return 0, nil }
