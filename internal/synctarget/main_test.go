package synctarget_test

import (
	"testing"

	"github.com/herald-bot/herald/internal/testsupport/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }
