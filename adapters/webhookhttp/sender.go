// Package webhookhttp delivers subscription webhooks over HTTP
// (ports.WebhookSender): bounded in time and in the answer it reads, never
// following redirects or proxies, and connecting only to addresses the
// webhook policy allows, checked after name resolution so a name that
// resolves (or is rebound) to a private address is refused too.
package webhookhttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/picomq/pico/ports"
)

// Config tunes a Sender; zero values take the defaults.
type Config struct {
	// Timeout bounds one delivery, connection to answer (10 s).
	Timeout time.Duration
	// MaxResponseBytes is how much of an answer is read (64 KiB).
	MaxResponseBytes int64
	// Policy is the address policy (by default, no loopback).
	Policy ports.WebhookPolicy
	// Resolve looks host names up (default: the system resolver).
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
}

// Sender implements ports.WebhookSender.
type Sender struct {
	cfg    Config
	client *http.Client
	dialer *net.Dialer
}

var _ ports.WebhookSender = (*Sender)(nil)

// ErrAddressRefused: the host resolves to no address a webhook may reach.
var ErrAddressRefused = errors.New("webhookhttp: no allowed address for the webhook host")

// New returns a sender.
func New(cfg Config) *Sender {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = 64 << 10
	}
	if cfg.Resolve == nil {
		cfg.Resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	s := &Sender{cfg: cfg, dialer: &net.Dialer{Timeout: cfg.Timeout}}
	s.client = &http.Client{
		Timeout: cfg.Timeout,
		Transport: &http.Transport{Proxy: nil, DialContext: s.dial, TLSHandshakeTimeout: cfg.Timeout,
			ResponseHeaderTimeout: cfg.Timeout, MaxIdleConnsPerHost: 4, IdleConnTimeout: 90 * time.Second,
			ForceAttemptHTTP2: true},
		// A redirect could lead anywhere: the answer is the 3xx itself.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return s
}

// Send posts one webhook; see ports.WebhookSender.
func (s *Sender) Send(ctx context.Context, req ports.WebhookRequest) (ports.WebhookResponse, error) {
	if err := s.cfg.Policy.Check(req.URL); err != nil {
		return ports.WebhookResponse{}, err
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, req.URL, bytes.NewReader(req.Body))
	if err != nil {
		return ports.WebhookResponse{}, err
	}
	for name, value := range req.Headers {
		hreq.Header.Set(name, value)
	}
	hreq.Header.Set("User-Agent", "picomq-webhooks")
	resp, err := s.client.Do(hreq)
	if err != nil {
		return ports.WebhookResponse{}, err
	}
	defer resp.Body.Close()
	// A short or failed read still leaves the status as the answer.
	body, _ := io.ReadAll(io.LimitReader(resp.Body, s.cfg.MaxResponseBytes))
	return ports.WebhookResponse{Status: resp.StatusCode, Body: body}, nil
}

// Policy is the sender's address policy; see ports.WebhookSender.
func (s *Sender) Policy() ports.WebhookPolicy { return s.cfg.Policy }

// dial connects to the first allowed address of the host: a public one,
// or loopback for the development hosts if the policy allows them.
func (s *Sender) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	addrs, err := s.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	dev := s.cfg.Policy.ReachesLoopback(strings.ToLower(host))
	lastErr := fmt.Errorf("%w: %s", ErrAddressRefused, host)
	for _, a := range addrs {
		if !ports.IsPublicAddress(a) && !(dev && a.IsLoopback()) {
			continue
		}
		conn, err := s.dialer.DialContext(ctx, network, net.JoinHostPort(a.Unmap().String(), port))
		if err == nil {
			return conn, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

func (s *Sender) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	return s.cfg.Resolve(ctx, host)
}
