package adminhttp

// NewEcho lets the external tests read the registered routes.
var NewEcho = newEcho
