//go:build !unix

package main

// lockMetaFile takes no lock where flock is not available.
func lockMetaFile(string) (func(), error) { return func() {}, nil }
