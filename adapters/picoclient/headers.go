package picoclient

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Pico protocol headers.
const (
	hdrTTL           = "Pico-TTL"
	hdrRetention     = "Pico-Retention"
	hdrExpiresAt     = "Pico-Expires-At"
	hdrClosed        = "Pico-Closed"
	hdrStartSeq      = "Pico-Start-Seq"
	hdrNextSeq       = "Pico-Next-Seq"
	hdrTimestamp     = "Pico-Timestamp"
	hdrUpToDate      = "Pico-Up-To-Date"
	hdrMatchSeq      = "Pico-Match-Seq"
	hdrTrimSeq       = "Pico-Trim-Seq"
	hdrProducerID    = "Pico-Producer-Id"
	hdrProducerEpoch = "Pico-Producer-Epoch"
	hdrProducerSeq   = "Pico-Producer-Seq"
	hdrExpectedSeq   = "Pico-Expected-Seq"
	hdrReceivedSeq   = "Pico-Received-Seq"
)

// headerUint reads a decimal header; absent is (0, false, nil).
func headerUint(h http.Header, name string) (uint64, bool, error) {
	v := h.Get(name)
	if v == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("response header %s: %q is not a number", name, v)
	}
	return n, true, nil
}

// headerTrue reads a protocol flag, which is set only as "true".
func headerTrue(h http.Header, name string) bool {
	return strings.EqualFold(h.Get(name), "true")
}

func formatUint(n uint64) string { return strconv.FormatUint(n, 10) }
