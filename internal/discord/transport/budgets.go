package transport

import "time"

// Discord's edge bans the bot's IP at 10,000 invalid requests (401, 403,
// non-shared 429) in 10 minutes, whoever caused them. herald splits that
// allowance so no caller can spend another's: the bot's own calls, the
// answers to interactions (tokens Discord gave herald), and webhook calls
// made with a token a proxy caller supplied each have a budget of their
// own, together below the ban. A budget that is spent refuses only its
// own kind of call: a flood of bad webhook tokens never stops the bot.
type budget int

const (
	budgetBot budget = iota
	budgetInteractions
	budgetWebhooks
	budgets
)

// String names the budget in health, metrics and errors.
func (b budget) String() string {
	return [...]string{"bot", "interactions", "webhooks"}[b]
}

// budgetOf is the budget a call on r spends.
func budgetOf(r Route) budget {
	switch {
	case r.Webhook != "" && r.TokenAuth():
		return budgetWebhooks
	case r.TokenAuth():
		return budgetInteractions
	}
	return budgetBot
}

// invalidBudgets counts each budget's invalid requests.
type invalidBudgets struct {
	counters [budgets]*invalidCounter
	limits   [budgets]int
}

func newInvalidBudgets(cfg Config) invalidBudgets {
	var b invalidBudgets
	b.limits = [budgets]int{cfg.InvalidLimit, cfg.InteractionInvalidLimit, cfg.WebhookInvalidLimit}
	for i := range b.counters {
		b.counters[i] = newInvalidCounter(invalidWindow)
	}
	return b
}

// share gives this process 1/of each budget's configured limit.
func (b *invalidBudgets) share(cfg Config, of int) {
	for k, limit := range [budgets]int{cfg.InvalidLimit, cfg.InteractionInvalidLimit, cfg.WebhookInvalidLimit} {
		b.limits[k] = max(limit/max(of, 1), 1)
	}
}

// add counts one invalid request a call on r caused.
func (b *invalidBudgets) add(r Route, now time.Time) { b.counters[budgetOf(r)].add(now) }

// check refuses a call on r once its budget is spent.
func (b *invalidBudgets) check(r Route, now time.Time) error {
	k := budgetOf(r)
	if n, leaves := b.counters[k].count(now); n >= b.limits[k] {
		return &InvalidBudgetError{Budget: k.String(), Count: n, Limit: b.limits[k], RetryAfter: leaves}
	}
	return nil
}

// counts returns each budget's invalid requests in the window, by name.
func (b *invalidBudgets) counts(now time.Time) []InvalidBudget {
	out := make([]InvalidBudget, budgets)
	for k := range budgets {
		n, _ := b.counters[k].count(now)
		out[k] = InvalidBudget{Name: k.String(), Count: n, Limit: b.limits[k]}
	}
	return out
}

// InvalidBudget is one budget's invalid requests in the last 10 minutes
// against its limit.
type InvalidBudget struct {
	Name  string `json:"name"` // bot, interactions or webhooks
	Count int    `json:"count"`
	Limit int    `json:"limit"`
}
