package node

import (
	"context"
	"errors"

	"github.com/picomq/pico/app/auth"
	"github.com/picomq/pico/ports"
)

// ErrNoToken: auth is required but no token is stored, so no request
// could ever be served.
var ErrNoToken = errors.New("node: --auth required, but no token is stored: give a bootstrap token (--auth-bootstrap-token or --auth-bootstrap-token-file)")

// startAuth creates the token service and stores the bootstrap token.
func (n *Node) startAuth(ctx context.Context) error {
	n.auth = auth.New(auth.Config{Plane: n.plane, By: n.Proposer(), Now: n.cfg.Now, Logger: n.cfg.Logger})
	if n.cfg.AuthBootstrap != "" {
		if err := n.auth.Bootstrap(ctx, n.cfg.AuthBootstrap); err != nil {
			return err
		}
	}
	if n.cfg.AuthRequired && !n.auth.AnyToken() {
		return ErrNoToken
	}
	return nil
}

// Auth decides the listeners' requests; nil while auth is off.
func (n *Node) Auth() ports.Authorizer {
	if !n.cfg.AuthRequired {
		return nil
	}
	return n.auth
}

// Tokens issues, revokes and lists tokens.
func (n *Node) Tokens() ports.TokenAdmin { return n.auth }
