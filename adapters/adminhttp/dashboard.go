package adminhttp

import (
	"embed"
	"net/http"

	"github.com/labstack/echo/v4"
)

// dashboardFiles is the dashboard at /: a page that reads the admin JSON
// (/admin/cluster every two seconds, /admin/streams/NAME on request).
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

func routeDashboard(e *echo.Echo) {
	e.GET("/", dashboardFile("index.html", "text/html; charset=utf-8"))
	e.GET("/dashboard.js", dashboardFile("dashboard.js", "text/javascript; charset=utf-8"))
	e.GET("/dashboard.css", dashboardFile("dashboard.css", "text/css; charset=utf-8"))
}
