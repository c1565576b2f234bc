package examplet

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestFatalEndsTheBodyAndFailsWithTheLog(t *testing.T) {
	var out strings.Builder
	var order []string
	reached := false
	run(&out, "walkthrough", func(tb testing.TB) {
		tb.Cleanup(func() { order = append(order, "first") })
		tb.Cleanup(func() { order = append(order, "second") })
		tb.Logf("step %d", 1)
		tb.Fatalf("no greeting after %s", "20s")
		reached = true
	})
	if reached {
		t.Error("the body went on after Fatalf")
	}
	if got := strings.Join(order, ","); got != "second,first" {
		t.Errorf("cleanups ran %q, want last first", got)
	}
	want := "examplet: walkthrough failed:\nstep 1\nno greeting after 20s\n"
	if out.String() != want {
		t.Errorf("printed %q, want %q", out.String(), want)
	}
}

func TestAPassingBodyPrintsNothing(t *testing.T) {
	var out strings.Builder
	run(&out, "quiet", func(tb testing.TB) {
		tb.Log("only shown on failure")
		if tb.Name() != "quiet" {
			tb.Errorf("Name() = %q", tb.Name())
		}
		select {
		case <-tb.Context().Done():
			tb.Error("context done while the body runs")
		default:
		}
	})
	if out.Len() != 0 {
		t.Errorf("printed %q", out.String())
	}
}

func TestSkipFailsAndCleanupsStillRun(t *testing.T) {
	var out strings.Builder
	var dir string
	run(&out, "skipper", func(tb testing.TB) {
		dir = tb.TempDir()
		tb.Skip("no database")
	})
	if !strings.Contains(out.String(), "no database\nskipped (an Example cannot skip)") {
		t.Errorf("printed %q", out.String())
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("temporary directory %s left behind (%v)", dir, err)
	}
}

func TestACleanupMayFailNow(t *testing.T) {
	var out strings.Builder
	ranBoth := 0
	run(&out, "cleanup", func(tb testing.TB) {
		tb.Cleanup(func() { ranBoth++ })
		tb.Cleanup(func() { ranBoth++; tb.Fatal("stop tearing down") })
	})
	if ranBoth != 2 || !strings.Contains(out.String(), "stop tearing down") {
		t.Errorf("%d cleanups ran, printed %q", ranBoth, out.String())
	}
}

func TestSetenvIsUndone(t *testing.T) {
	const key = "EXAMPLET_TEST_VAR"
	os.Unsetenv(key)
	run(&strings.Builder{}, "env", func(tb testing.TB) { tb.Setenv(key, "1") })
	if _, set := os.LookupEnv(key); set {
		t.Errorf("%s still set after Run", key)
	}
}

// An Example uses the same helpers a test does.
func ExampleRun() {
	Run("sum", func(t testing.TB) {
		if got := 2 + 2; got != 4 {
			t.Fatalf("2 + 2 = %d", got)
		}
		fmt.Println("2 + 2 = 4")
	})
	// Output: 2 + 2 = 4
}
