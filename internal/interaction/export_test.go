package interaction

import "time"

// MaxInFlight is the bound on requests the endpoint reads and serves at
// once.
const MaxInFlight = maxInFlight

// SetAdmitWait shortens how long a request waits for a slot.
func SetAdmitWait(e *Endpoint, d time.Duration) { e.wait = d }
