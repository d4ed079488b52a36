package adminhttp

import (
	"embed"
	"net/http"

	"github.com/labstack/echo/v4"
)

// dashboardFiles is the dashboard at /: a page that reads the admin JSON
// (/admin/cluster every two seconds, /admin/streams/NAME on request) and
// lists, issues and revokes tokens (/admin/tokens), sending the token it
// keeps in session storage, which it asks for on a 401.
//
//go:embed dashboard
var dashboardFiles embed.FS

// dashboardCSP allows the page its own script and style only.
const dashboardCSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

func dashboardFile(name, contentType string) echo.HandlerFunc {
	body, err := dashboardFiles.ReadFile("dashboard/" + name)
	if err != nil {
		panic("adminhttp: the dashboard lacks " + name) // embedded at build time
	}
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("Content-Security-Policy", dashboardCSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-cache")
		return c.Blob(http.StatusOK, contentType, body)
	}
}

// dashboardRoutes serve the page and its files to anyone: the page asks
// for a token when the admin JSON needs one.
func dashboardRoutes() []route {
	return []route{
		{http.MethodGet, "/", dashboardFile("index.html", "text/html; charset=utf-8"), public},
		{http.MethodGet, "/dashboard.js", dashboardFile("dashboard.js", "text/javascript; charset=utf-8"), public},
		{http.MethodGet, "/dashboard.css", dashboardFile("dashboard.css", "text/css; charset=utf-8"), public},
	}
}
