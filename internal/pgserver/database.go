package pgserver

import (
	"errors"
	"net/url"
	"strings"
)

// WithDatabase returns serverURL pointing at database name instead. Both URL
// and keyword/value connection strings are accepted, as pgx accepts both.
func WithDatabase(serverURL, name string) (string, error) {
	if !strings.HasPrefix(serverURL, "postgres://") && !strings.HasPrefix(serverURL, "postgresql://") {
		// In keyword/value strings the last setting wins.
		return serverURL + " dbname=" + name, nil
	}
	u, err := url.Parse(serverURL)
	if err != nil {
		// url.Error would quote the URL, password and all.
		return "", errors.New("pgserver: server URL does not parse")
	}
	u.Path, u.RawPath = "/"+name, ""
	q := u.Query()
	q.Del("dbname")
	u.RawQuery = q.Encode()
	return u.String(), nil
}
