package adminhttp

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/picomq/pico/adapters/internal/server/authgate"
	"github.com/picomq/pico/adapters/internal/wire/adminwire"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// maxTokenBody bounds POST /admin/tokens: an id and the largest scope.
const maxTokenBody = domain.MaxScopeJSON + 1<<10

func tokenRoutes(h handlers) []route {
	return []route{
		{http.MethodGet, "/admin/tokens", h.withTokens(h.tokens), op(domain.OpListTokens)},
		{http.MethodPost, "/admin/tokens", h.withTokens(h.issueToken), op(domain.OpIssueToken)},
		{http.MethodDelete, "/admin/tokens/*", h.withTokens(h.revokeToken), op(domain.OpRevokeToken)},
	}
}

// withTokens answers 503 on a node that administers no tokens.
func (h handlers) withTokens(serve echo.HandlerFunc) echo.HandlerFunc {
	if h.tokenAdmin == nil {
		return func(echo.Context) error {
			return echo.NewHTTPError(http.StatusServiceUnavailable, "this node administers no tokens")
		}
	}
	return serve
}

// caller is the request's grant; with auth off, the loopback caller holds
// the root scope (the bind guard keeps such a listener on loopback).
func caller(c echo.Context) ports.Grant {
	if g, ok := authgate.GrantOf(c.Request().Context()); ok {
		return g
	}
	return ports.Grant{Scope: domain.RootScope()}
}

// tokens is GET /admin/tokens: the records the caller's token matchers
// cover, never a secret or its hash.
func (h handlers) tokens(c echo.Context) error {
	out := adminwire.Tokens{Tokens: []adminwire.Token{}}
	for _, t := range h.tokenAdmin.Tokens(caller(c)) {
		w, err := tokenOf(t)
		if err != nil {
			return err
		}
		out.Tokens = append(out.Tokens, w)
	}
	return c.JSON(http.StatusOK, out)
}

// issueToken is POST /admin/tokens {"id", "scope"}: 201 with the wire
// token, shown this once.
func (h handlers) issueToken(c echo.Context) error {
	var req adminwire.IssueToken
	if err := decodeBodyUpTo(c, &req, maxTokenBody); err != nil || req.ID == "" || req.Scope == nil {
		return orUsage(err, `body: want {"id": ID, "scope": SCOPE}`)
	}
	scope, err := domain.ParseScope(req.Scope)
	if err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, err.Error())
	}
	by := caller(c)
	wire, err := h.tokenAdmin.Issue(c.Request().Context(), by, req.ID, scope)
	if err != nil {
		return echo.NewHTTPError(tokenStatus(err), err.Error())
	}
	w, err := tokenOf(h.issued(by, req.ID, scope))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, adminwire.IssuedToken{Token: w, Wire: wire})
}

// issued is the record just issued as the view holds it (looked up with
// the root scope: the caller may issue tokens it may not list).
func (h handlers) issued(by ports.Grant, id string, scope domain.Scope) ports.TokenInfo {
	for _, t := range h.tokenAdmin.Tokens(ports.Grant{Scope: domain.RootScope()}) {
		if t.ID == id {
			return t
		}
	}
	return ports.TokenInfo{ID: id, Scope: scope, Issuer: by.TokenID}
}

// revokeToken is DELETE /admin/tokens/ID (ID path-escaped): 204.
func (h handlers) revokeToken(c echo.Context) error {
	id, err := url.PathUnescape(c.Param("*"))
	if err != nil || id == "" {
		return echo.NewHTTPError(http.StatusBadRequest, "want DELETE /admin/tokens/ID, the id path-escaped")
	}
	if err := h.tokenAdmin.Revoke(c.Request().Context(), caller(c), id); err != nil {
		return echo.NewHTTPError(tokenStatus(err), err.Error())
	}
	return c.NoContent(http.StatusNoContent)
}

func tokenOf(t ports.TokenInfo) (adminwire.Token, error) {
	scope, err := json.Marshal(t.Scope)
	return adminwire.Token{ID: t.ID, Scope: scope, Issuer: t.Issuer, CreatedAtMs: t.CreatedAtMs}, err
}

func tokenStatus(err error) int {
	switch {
	case errors.Is(err, ports.ErrBadRequest):
		return http.StatusBadRequest
	case errors.Is(err, ports.ErrForbidden):
		return http.StatusForbidden
	case errors.Is(err, ports.ErrTokenExists):
		return http.StatusConflict
	case errors.Is(err, ports.ErrTokenNotFound):
		return http.StatusNotFound
	}
	return http.StatusServiceUnavailable
}
