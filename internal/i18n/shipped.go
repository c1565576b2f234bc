package i18n

import (
	"sync"

	"github.com/herald-bot/herald/locales"
)

// Shipped is the catalog of herald's own locale files, parsed on first use
// and shared by everything in the process: a Catalog is read-only once
// built, and parsing takes 30 ms and 13 MB, which every herald a test
// started paid twice.
var Shipped = sync.OnceValues(func() (*Catalog, error) { return New(locales.FS) })
