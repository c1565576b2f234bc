package spec

import (
	"testing"
)

// BenchmarkExchange measures one validated request and its response, what
// Middleware adds to every simulated REST call.
func BenchmarkExchange(b *testing.B) {
	v := testValidator(b)
	const body = `{"content":"Pick your roles","nonce":"rolemenu-7-rev3","enforce_nonce":true,` +
		`"components":[{"type":1,"components":[{"type":2,"style":1,"label":"Red","custom_id":"/pick/7/1"}]}]}`
	h := bucket("4")
	// The first exchange compiles the operation's schemas; measure the rest.
	exchange(b, v, body, h)
	b.Run("sequential", func(b *testing.B) {
		for b.Loop() {
			exchange(b, v, body, h)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				exchange(b, v, body, h)
			}
		})
	})
}

func exchange(b *testing.B, v *Validator, body string, h map[string][]string) {
	r := newRequest("POST", "/api/v9/channels/1100000000000000001/messages", "application/json", body)
	if err := v.ValidateRequest(r, []byte(body)); err != nil {
		b.Fatal(err)
	}
	if err := v.ValidateResponse(r, []byte(body), 200, h, []byte(message)); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkLoad measures Load, paid once per test binary.
func BenchmarkLoad(b *testing.B) {
	testValidator(b)
	for b.Loop() {
		if _, _, err := FromEnv(); err != nil {
			b.Fatal(err)
		}
	}
}
