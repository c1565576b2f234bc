package config

import (
	"log/slog"
	"net/url"
)

// Secret is a string that never prints itself: fmt, slog and JSON all see
// "[redacted]". Reveal is the one way to read it, so every use is greppable.
type Secret string

const redacted = "[redacted]"

func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return redacted
}

// GoString covers %#v, which would otherwise print the raw string.
func (s Secret) GoString() string { return s.String() }

// LogValue keeps the secret out of slog output.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalText keeps the secret out of JSON and text encodings.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Reveal returns the secret itself, for the one place that needs it.
func (s Secret) Reveal() string { return string(s) }

// DatabaseURL is a Postgres URL whose password is redacted when printed.
type DatabaseURL string

// String masks the password wherever libpq would read one: the user
// info, and the password (and sslpassword) query parameters.
func (d DatabaseURL) String() string {
	u, err := url.Parse(string(d))
	if err != nil {
		return redacted
	}
	q := u.Query()
	for _, k := range []string{"password", "sslpassword"} {
		if q.Has(k) {
			q.Set(k, "xxxxx")
		}
	}
	u.RawQuery = q.Encode()
	return u.Redacted()
}

// GoString covers %#v.
func (d DatabaseURL) GoString() string { return d.String() }

// LogValue keeps the password out of slog output.
func (d DatabaseURL) LogValue() slog.Value { return slog.StringValue(d.String()) }

// MarshalText keeps the password out of JSON and text encodings.
func (d DatabaseURL) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// Reveal returns the URL with its password, for the database driver only.
func (d DatabaseURL) Reveal() string { return string(d) }
