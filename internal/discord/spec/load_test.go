package spec

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Not parallel: it changes the environment.
func TestFromEnv(t *testing.T) {
	t.Setenv(EnvVar, "")
	if v, ok, err := FromEnv(); v != nil || ok || err != nil {
		t.Fatalf("unset: got %v, %v, %v; want nil, false, nil", v, ok, err)
	}

	missing := filepath.Join(t.TempDir(), "missing.json")
	t.Setenv(EnvVar, missing)
	if _, ok, err := FromEnv(); !ok || err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Fatalf("missing file: got ok=%v, err=%v; want ok and an error naming the file", ok, err)
	}

	garbage := filepath.Join(t.TempDir(), "garbage.json")
	if err := os.WriteFile(garbage, []byte("this is not an OpenAPI document"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(garbage); err == nil {
		t.Fatal("Load accepted a file that is not an OpenAPI document")
	}

	// A relative path resolves against the working directory's parents, as
	// .ci/run's ../shared/discord-openapi.json must from a package directory.
	root := t.TempDir()
	pkg := filepath.Join(root, "internal", "discord", "spec")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "spec.json"), []byte("not OpenAPI"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(pkg)
	t.Setenv(EnvVar, "spec.json")
	if _, _, err := FromEnv(); err == nil || !strings.Contains(err.Error(), filepath.Join(root, "spec.json")) {
		t.Fatalf("relative path: got %v, want an error about %s, found by walking up", err, filepath.Join(root, "spec.json"))
	}
}

func TestOnlyAPIPaths(t *testing.T) {
	t.Parallel()
	v := testValidator(t)
	for _, path := range []string{"/api/v8/users/@me", "/_sim/stats", "/users/@me"} {
		r := newRequest("GET", path, "", "")
		if err := v.ValidateRequest(r, nil); err == nil || !strings.Contains(err.Error(), "not a Discord API path") {
			t.Errorf("%s: got %v, want a not-a-Discord-API-path error", path, err)
		}
	}
	for _, path := range []string{"/api/v9/users/@me", "/api/v10/users/@me"} {
		if err := v.ValidateRequest(newRequest("GET", path, "", ""), nil); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
}

func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	v := testValidator(t)
	const good = `{"content":"hi","nonce":"n1","enforce_nonce":true}`
	const bad = `{"content":"hi","nonce":true}`
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 10 {
				body, wantErr := good, false
				if (g+i)%3 == 0 {
					body, wantErr = bad, true
				}
				r := newRequest("POST", "/api/v9/channels/1100000000000000001/messages", "application/json", body)
				if err := v.ValidateRequest(r, []byte(body)); (err != nil) != wantErr {
					t.Errorf("request %s: got %v, want error %v", body, err, wantErr)
				}
				if err := v.ValidateResponse(r, []byte(body), 200, bucket("4"), []byte(message)); err != nil {
					t.Errorf("response: %v", err)
				}
			}
		})
	}
	wg.Wait()
}
