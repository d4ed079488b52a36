//go:build picobroken

package broken

import "os"

// which is the behaviour PICO_BROKEN turns on, read once at start.
var which = os.Getenv("PICO_BROKEN")

// AckEarly reports whether appends are acknowledged before they are durable.
func AckEarly() bool { return which == "ack-early" }

// SkipFence reports whether takeovers leave the previous WAL unfenced.
func SkipFence() bool { return which == "skip-fence" }

// StaleRead reports whether reads return unconfirmed records.
func StaleRead() bool { return which == "stale-read" }
