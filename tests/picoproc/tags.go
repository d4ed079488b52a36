//go:build !picobroken

package picoproc

// buildTags are the tags pico is built with: a test built with the
// picobroken tag runs a pico built with it too (package broken).
var buildTags []string
