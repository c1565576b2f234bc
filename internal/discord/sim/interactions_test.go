package sim_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/discord/sim"
)

func (w *world) command(t *testing.T) sim.InteractionCreated {
	t.Helper()
	return w.Interact(sim.InteractionRequest{GuildID: w.g.ID, ChannelID: w.g.Channel("general"), UserID: w.g.Member("bob"), Kind: "command", Name: "ticket"})
}

func callbackPath(in sim.InteractionCreated) string {
	return "/interactions/" + in.ID + "/" + in.Token + "/callback"
}

func TestInteractionDeadline(t *testing.T) {
	tests := []struct {
		wait time.Duration
		want int
	}{
		{2999 * time.Millisecond, 204},
		{3 * time.Second, 204},
		{3001 * time.Millisecond, 404},
	}
	for _, tt := range tests {
		t.Run(tt.wait.String(), func(t *testing.T) {
			w := newWorld(t)
			in := w.command(t)
			w.Clock.Advance(tt.wait)
			r := w.Do("POST", callbackPath(in), map[string]any{"type": 5})
			if tt.want == 404 {
				e := wantError(t, r, 404, 10062)
				if e.Message != "Unknown interaction" {
					t.Fatalf("message %q", e.Message)
				}
				if st := w.Interaction(in.ID); st.Acked || st.AckLatencyMS != nil {
					t.Fatalf("late ack recorded: %+v", st)
				}
				return
			}
			wantStatus(t, r, tt.want)
			st := w.Interaction(in.ID)
			if !st.Acked || st.AckType != 5 || st.AckLatencyMS == nil || *st.AckLatencyMS != float64(tt.wait.Milliseconds()) {
				t.Fatalf("status %+v", st)
			}
		})
	}
}

func TestInteractionAcknowledgedOnce(t *testing.T) {
	w := newWorld(t)
	in := w.command(t)
	wantStatus(t, w.Do("POST", callbackPath(in), map[string]any{"type": 4, "data": map[string]any{"content": "hello"}}), 204)
	e := wantError(t, w.Do("POST", callbackPath(in), map[string]any{"type": 4, "data": map[string]any{"content": "again"}}), 400, 40060)
	if e.Message != "Interaction has already been acknowledged." {
		t.Fatalf("message %q", e.Message)
	}
	msgs := w.Messages(w.g.Channel("general"))
	if len(msgs) != 1 || msgs[0].Content != "hello" || msgs[0].Type != 20 {
		t.Fatalf("messages %+v", msgs)
	}
	// A wrong token is an unknown interaction.
	wantError(t, w.Do("POST", "/interactions/"+in.ID+"/nope/callback", map[string]any{"type": 5}), 404, 10062)
}

func TestInteractionTokenLifetime(t *testing.T) {
	w := newWorld(t)
	in := w.command(t)
	hook := "/webhooks/" + w.g.ApplicationID + "/" + in.Token
	// No follow-up before the interaction is acknowledged.
	wantError(t, w.DoAs("POST", hook, "", map[string]any{"content": "early"}), 404, 10015)
	wantStatus(t, w.Do("POST", callbackPath(in), map[string]any{"type": 5}), 204)

	r := w.DoAs("GET", hook+"/messages/@original", "", nil)
	wantStatus(t, r, 200)
	var orig struct {
		ID    string `json:"id"`
		Flags int    `json:"flags"`
	}
	r.JSON(t, &orig)
	if orig.Flags&(1<<7) == 0 {
		t.Fatalf("deferred original lacks the loading flag: %s", r.Body)
	}
	// The first follow-up after a deferral fills the thinking message.
	first := w.DoAs("POST", hook, "", map[string]any{"content": "ticket opened"})
	wantStatus(t, first, 200)
	var got struct {
		ID      string `json:"id"`
		Content string `json:"content"`
	}
	first.JSON(t, &got)
	if got.ID != orig.ID || got.Content != "ticket opened" {
		t.Fatalf("first follow-up %s, want the original %s filled", first.Body, orig.ID)
	}
	wantStatus(t, w.DoAs("POST", hook, "", map[string]any{"content": "second"}), 200)
	if st := w.Interaction(in.ID); st.Followups != 2 {
		t.Fatalf("followups %d", st.Followups)
	}
	w.Clock.Advance(14*time.Minute + 59*time.Second)
	wantStatus(t, w.DoAs("PATCH", hook+"/messages/@original", "", map[string]any{"content": "edited"}), 200)
	w.Clock.Advance(2 * time.Second)
	wantError(t, w.DoAs("PATCH", hook+"/messages/@original", "", map[string]any{"content": "late"}), 401, 50027)
	wantError(t, w.DoAs("POST", hook, "", map[string]any{"content": "late"}), 401, 50027)
	msgs := w.Messages(w.g.Channel("general"))
	if len(msgs) != 2 || msgs[0].Content != "edited" {
		t.Fatalf("messages after expiry: %+v", msgs)
	}
}

func TestComponentUpdateAndEphemeral(t *testing.T) {
	w := newWorld(t)
	ch := w.g.Channel("roles")
	menu := w.post(t, ch, map[string]any{"content": "pick", "components": []any{
		map[string]any{"type": 1, "components": []any{map[string]any{"type": 2, "style": 1, "label": "News", "custom_id": "role:news"}}},
	}})
	in := w.Interact(sim.InteractionRequest{GuildID: w.g.ID, ChannelID: ch, UserID: w.g.Member("dave"), Kind: "component", CustomID: "role:news", MessageID: menu["id"].(string)})
	wantStatus(t, w.Do("POST", callbackPath(in), map[string]any{"type": 7, "data": map[string]any{"content": "picked"}}), 204)
	msgs := w.Messages(ch)
	if len(msgs) != 1 || msgs[0].Content != "picked" || msgs[0].EditedTimestamp == nil {
		t.Fatalf("update did not edit the menu: %+v", msgs[0])
	}
	// An ephemeral follow-up stays out of the channel.
	wantStatus(t, w.DoAs("POST", "/webhooks/"+w.g.ApplicationID+"/"+in.Token, "", map[string]any{"content": "only you", "flags": 64}), 200)
	if n := len(w.Messages(ch)); n != 1 {
		t.Fatalf("%d channel messages; the ephemeral one leaked", n)
	}
	// Update type is only for component interactions.
	cmd := w.command(t)
	wantError(t, w.Do("POST", callbackPath(cmd), map[string]any{"type": 7, "data": map[string]any{"content": "x"}}), 400, 50035)
}

// The first answer's content stays on record after the reply is edited:
// what the member read first (a refusal, say) is not lost to later work.
func TestAckContentIsTheFirstAnswer(t *testing.T) {
	w := newWorld(t)
	in := w.command(t)
	wantStatus(t, w.Do("POST", callbackPath(in), map[string]any{"type": 4, "data": map[string]any{"content": "first", "flags": 64}}), 204)
	wantStatus(t, w.DoAs("PATCH", "/webhooks/"+w.g.ApplicationID+"/"+in.Token+"/messages/@original", "", map[string]any{"content": "second"}), 200)
	st := w.Interaction(in.ID)
	if st.AckContent != "first" || st.Original["content"] != "second" {
		t.Fatalf("ack content %q, original %v; want first, then second", st.AckContent, st.Original["content"])
	}
	deferred := w.command(t)
	wantStatus(t, w.Do("POST", callbackPath(deferred), map[string]any{"type": 5}), 204)
	if st := w.Interaction(deferred.ID); st.AckContent != "" {
		t.Fatalf("a deferred answer carried %q", st.AckContent)
	}
}

// textInput is a modal's paragraph input in its action row, with one more
// field set.
func textInput(customID, field string, value any) map[string]any {
	return map[string]any{"type": 1, "components": []any{map[string]any{"type": 4, "custom_id": customID, "label": "Why?", "style": 2, field: value}}}
}

func modalOf(rows ...any) map[string]any {
	return map[string]any{"type": 9, "data": map[string]any{"custom_id": "m", "title": "Ticket", "components": rows}}
}

// A callback's data is checked as Discord checks it; a modal's text inputs
// by the Component Reference's "Text Input": custom_id 1-100 characters,
// unique in the modal; label at most 45; min_length 0-4000; max_length
// 1-4000; value at most 4000; placeholder at most 100.
func TestCallbackValidation(t *testing.T) {
	w := newWorld(t)
	w.SetLimits(sim.LimitChange{Route: "POST /interactions/{interaction_id}/{interaction_token}/callback", Limit: 100, WindowMS: 1000})
	in := w.command(t)
	tests := []struct {
		body  map[string]any
		path  string
		field string
	}{
		{map[string]any{"type": 4, "data": map[string]any{"content": strings.Repeat("a", 2001)}}, "data.content", "BASE_TYPE_MAX_LENGTH"},
		{map[string]any{"type": 9, "data": map[string]any{"custom_id": "m", "components": row(1, "a")}}, "data.title", "BASE_TYPE_REQUIRED"},
		{modalOf(textInput("why", "max_length", 4001)), "data.components.0.components.0.max_length", "NUMBER_TYPE_MAX"},
		{modalOf(textInput("why", "min_length", 4001)), "data.components.0.components.0.min_length", "NUMBER_TYPE_MAX"},
		{modalOf(textInput("why", "placeholder", strings.Repeat("p", 101))), "data.components.0.components.0.placeholder", "BASE_TYPE_MAX_LENGTH"},
		{modalOf(textInput("why", "label", strings.Repeat("l", 46))), "data.components.0.components.0.label", "BASE_TYPE_MAX_LENGTH"},
		{modalOf(textInput("why", "value", strings.Repeat("v", 4001))), "data.components.0.components.0.value", "BASE_TYPE_MAX_LENGTH"},
		{modalOf(textInput(strings.Repeat("c", 101), "style", 1)), "data.components.0.components.0.custom_id", "BASE_TYPE_BAD_LENGTH"},
		{modalOf(textInput("why", "style", 1), textInput("why", "style", 2)), "data.components.1.components.0.custom_id", "COMPONENT_CUSTOM_ID_DUPLICATED"},
		{modalOf(map[string]any{"type": 18, "label": "Why?", "component": map[string]any{"type": 4, "custom_id": "why", "style": 2, "max_length": 0}}),
			"data.components.0.component.max_length", "NUMBER_TYPE_MIN"},
		{map[string]any{"type": 6}, "type", "BASE_TYPE_CHOICES"},
		{map[string]any{}, "type", "BASE_TYPE_REQUIRED"},
	}
	for _, tt := range tests {
		r := w.DoInvalid("POST", callbackPath(in), tt.body)
		e := wantError(t, r, 400, 50035)
		if fieldError(e, tt.path) != tt.field {
			t.Errorf("%v: %s, want %s at %s", tt.body, r.Body, tt.field, tt.path)
		}
	}
	// Rejected callbacks do not acknowledge; a valid modal does.
	modal := map[string]any{"type": 9, "data": map[string]any{"custom_id": "ticket:new", "title": "New ticket", "components": []any{
		map[string]any{"type": 1, "components": []any{map[string]any{"type": 4, "custom_id": "why", "label": "Why?", "style": 2,
			"min_length": 0, "max_length": 4000, "placeholder": strings.Repeat("p", 100), "value": strings.Repeat("v", 4000)}}},
	}}}
	wantStatus(t, w.Do("POST", callbackPath(in), modal), 204)
	if st := w.Interaction(in.ID); !st.Acked || st.AckType != 9 {
		t.Fatalf("status %+v", st)
	}
}

func TestUnansweredListsTheInteractionsStillOut(t *testing.T) {
	w := newWorld(t)
	a, b, c := w.command(t), w.command(t), w.command(t)
	wantStatus(t, w.Do("POST", callbackPath(b), map[string]any{"type": 5}), 204)
	got := w.Unanswered([]string{a.ID, b.ID, c.ID, "404"})
	if want := []string{a.ID, c.ID, "404"}; !slices.Equal(got, want) {
		t.Fatalf("unanswered %v, want %v (an unknown id stays out)", got, want)
	}
	wantStatus(t, w.Do("POST", callbackPath(a), map[string]any{"type": 5}), 204)
	wantStatus(t, w.Do("POST", callbackPath(c), map[string]any{"type": 5}), 204)
	if got := w.Unanswered(got); !slices.Equal(got, []string{"404"}) {
		t.Fatalf("unanswered %v after the answers", got)
	}
}
