package ports

// Observer takes one measurement, such as a duration in seconds or a size
// in bytes. It is how the app reports a distribution without knowing the
// metrics library: a Prometheus histogram is one. Safe for concurrent use;
// a nil Observer field means nobody is measuring.
type Observer interface {
	Observe(float64)
}
