package config

import "fmt"

// Var is a setting of type T that a feature declares. Load reads and
// checks it with herald's own, so an operator sees every problem in one
// round, and `herald --help` lists it. A secret is a Var[Secret], which
// prints redacted.
type Var[T any] struct {
	Setting
	// Parse checks v (the default when unset) and returns the value Get
	// gives the feature.
	Parse func(v string) (T, error)
}

// Declared is a feature's setting whatever its type, as a feature lists
// them for Load.
type Declared interface {
	declared() (Setting, func(string) (any, error))
}

func (v Var[T]) declared() (Setting, func(string) (any, error)) {
	return v.Setting, func(s string) (any, error) { return v.Parse(s) }
}

// Get is v's value in c: as Load parsed it, or v's default when c was
// loaded without v (a test that builds herald from its own Config). A
// default that does not parse is a bug in v's declaration, which Load
// reports at start; Get panics on it.
func (v Var[T]) Get(c Config) T {
	if val, ok := c.vars[v.Key].(T); ok {
		return val
	}
	val, err := v.Parse(v.Default)
	if err != nil {
		panic(fmt.Sprintf("config: %s: the default %q does not parse: %v", v.Key, v.Default, err))
	}
	return val
}
