package feature

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/herald-bot/herald/internal/i18n"
)

func TestReportsCollectInOrder(t *testing.T) {
	var r Reports
	r.Add("a", func(_ context.Context, g string, _ *i18n.Localizer) ([]string, error) { return []string{"a:" + g}, nil })
	r.Add("quiet", func(context.Context, string, *i18n.Localizer) ([]string, error) { return nil, nil })
	r.Add("b", func(_ context.Context, g string, _ *i18n.Localizer) ([]string, error) {
		return []string{"b1", "b2"}, nil
	})
	got, err := r.Collect(t.Context(), "7", nil)
	if err != nil || !slices.Equal(got, []string{"a:7", "b1", "b2"}) {
		t.Errorf("Collect = %v, %v", got, err)
	}
	r.Add("broken", func(context.Context, string, *i18n.Localizer) ([]string, error) { return nil, errors.New("db down") })
	if _, err := r.Collect(t.Context(), "7", nil); err == nil || err.Error() != "feature broken: report: db down" {
		t.Errorf("a failing report: %v", err)
	}
}
