//go:build !picobroken

package broken

// AckEarly reports whether appends are acknowledged before they are durable.
func AckEarly() bool { return false }

// SkipFence reports whether takeovers leave the previous WAL unfenced.
func SkipFence() bool { return false }

// StaleRead reports whether reads return unconfirmed records.
func StaleRead() bool { return false }
