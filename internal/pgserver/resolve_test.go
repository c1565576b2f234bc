package pgserver_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/pgserver"
	"github.com/herald-bot/herald/internal/testsupport/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// noCluster fails the test if the resolver tries to start a cluster.
func noCluster(t *testing.T) func(context.Context, string) (*pgserver.Cluster, error) {
	return func(_ context.Context, dir string) (*pgserver.Cluster, error) {
		t.Errorf("resolver started a cluster from %s", dir)
		return nil, errors.New("no cluster expected")
	}
}

func TestResolveHonoursDatabaseURL(t *testing.T) {
	t.Parallel()
	want := pgtest.URL(t)
	r := pgserver.Resolver{
		Getenv:       env(map[string]string{"DATABASE_URL": want}),
		DefaultURL:   pgtest.RefusedURL(t),
		ProbeTimeout: 5 * time.Second,
		StartCluster: noCluster(t),
	}
	got, c, err := r.Resolve(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got != want || c != nil {
		t.Fatalf("resolve = %q, %v; want %q and no cluster", got, c, want)
	}
}

func TestResolveUnreachableDatabaseURLFailsWithoutPassword(t *testing.T) {
	t.Parallel()
	r := pgserver.Resolver{
		Getenv:       env(map[string]string{"DATABASE_URL": pgtest.RefusedURL(t)}),
		DefaultURL:   pgserver.DefaultURL,
		ProbeTimeout: 5 * time.Second,
		StartCluster: noCluster(t),
	}
	_, _, err := r.Resolve(t.Context())
	if err == nil {
		t.Fatal("resolve succeeded with an unreachable DATABASE_URL, want an error rather than falling back")
	}
	if !strings.Contains(err.Error(), "DATABASE_URL") || strings.Contains(err.Error(), "sekret") {
		t.Fatalf("error %q should name DATABASE_URL and hide the password", err)
	}
}

func TestResolveUsesDefaultServer(t *testing.T) {
	t.Parallel()
	want := pgtest.URL(t)
	r := pgserver.Resolver{
		Getenv:       env(nil),
		DefaultURL:   want,
		ProbeTimeout: 5 * time.Second,
		StartCluster: noCluster(t),
	}
	got, c, err := r.Resolve(t.Context())
	if err != nil || got != want || c != nil {
		t.Fatalf("resolve = %q, %v, %v; want %q", got, c, err, want)
	}
}

func TestResolveStartsClusterFromPath(t *testing.T) {
	t.Parallel()
	bin := fakeBinDir(t)
	var started string
	want := &pgserver.Cluster{} // its URL names port 0
	r := pgserver.Resolver{
		Getenv:       env(map[string]string{"PATH": bin}),
		DefaultURL:   pgtest.RefusedURL(t),
		ProbeTimeout: 5 * time.Second,
		StartCluster: func(_ context.Context, dir string) (*pgserver.Cluster, error) {
			started = dir
			return want, nil
		},
	}
	got, c, err := r.Resolve(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if started != bin || c != want || got != want.URL() {
		t.Fatalf("resolve = %q, %p from %q; want %q, %p from %q", got, c, started, want.URL(), want, bin)
	}
}

func TestResolveWithoutPostgresSaysHowToInstall(t *testing.T) {
	t.Parallel()
	r := pgserver.Resolver{
		Getenv:       env(map[string]string{"PATH": ""}),
		DefaultURL:   pgtest.RefusedURL(t),
		BinGlobs:     nil,
		ProbeTimeout: 5 * time.Second,
		StartCluster: noCluster(t),
	}
	_, _, err := r.Resolve(t.Context())
	if err == nil {
		t.Fatal("resolve succeeded with no Postgres anywhere")
	}
	for _, want := range []string{"install PostgreSQL", "apt-get install postgresql", "DATABASE_URL"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "sekret") {
		t.Errorf("error %q reveals the password", err)
	}
}

func TestFindBinDir(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	v9 := fakeBinDirAt(t, filepath.Join(root, "9.6", "bin"))
	v15 := fakeBinDirAt(t, filepath.Join(root, "15", "bin"))
	incomplete := filepath.Join(root, "incomplete")
	if err := os.MkdirAll(incomplete, 0o755); err != nil {
		t.Fatal(err)
	}
	writeExecutable(t, filepath.Join(incomplete, "initdb"))
	glob := filepath.Join(root, "*", "bin")

	tests := []struct {
		name, path string
		globs      []string
		want       string
		ok         bool
	}{
		{"PATH first", strings.Join([]string{incomplete, v9}, string(filepath.ListSeparator)), []string{glob}, v9, true},
		{"newest installed version", incomplete, []string{glob}, v15, true},
		{"nothing", "", nil, "", false},
		{"incomplete installation", incomplete, nil, "", false},
	}
	for _, tt := range tests {
		got, ok := pgserver.FindBinDir(tt.path, tt.globs)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: findBinDir = %q, %v; want %q, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

func fakeBinDir(t *testing.T) string {
	t.Helper()
	return fakeBinDirAt(t, t.TempDir())
}

func fakeBinDirAt(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range pgserver.Binaries {
		writeExecutable(t, filepath.Join(dir, name))
	}
	return dir
}

func writeExecutable(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}
