package sim

import (
	"encoding/json"
	"slices"
	"strconv"
	"time"
)

// Interaction kinds of the control API and their Discord types.
const (
	kindCommand      = "command"
	kindAutocomplete = "autocomplete"
	kindComponent    = "component"
	kindModal        = "modal"
)

// Interaction callback types.
const (
	callbackMessage         = 4
	callbackDeferredMessage = 5
	callbackDeferredUpdate  = 6
	callbackUpdateMessage   = 7
	callbackAutocomplete    = 8
	callbackModal           = 9
)

// maxChoices is how many autocomplete choices Discord shows.
const maxChoices = 25

// flagLoading marks the "is thinking..." message of a deferred response.
const flagLoading = 1 << 7

type interaction struct {
	id        string
	token     string
	kind      string
	guildID   string
	channelID string
	userID    string
	messageID string // the message a component sits on
	createdAt time.Time
	payload   map[string]any // the INTERACTION_CREATE data

	acked      bool
	ackType    int
	ackLatency time.Duration
	originalID string
	followups  []string
	choices    []Choice // an autocomplete answer's
	ackContent string   // the initial response's content, before any edit
	modal      json.RawMessage
	// via is how the initial response came (ViaCallback, ViaResponse);
	// deliveryError why the Interactions Endpoint URL's answer was not
	// taken.
	via           string
	deliveryError string
}

func errBadCallback() *apiError {
	var f formErrors
	f.add("type", "BASE_TYPE_CHOICES", "Value must be one of {4, 5, 6, 7, 8, 9}.")
	return f.err()
}

func interactionCallback(s *Server, rq *request) (any, *apiError) {
	in, ok := s.st.interactions[rq.params["interaction_id"]]
	if !ok || in.token != rq.params["interaction_token"] {
		return nil, errUnknown(codeUnknownInteraction)
	}
	var body struct {
		Type *int            `json:"type"`
		Data json.RawMessage `json:"data"`
	}
	if err := rq.decode(&body); err != nil {
		return nil, err
	}
	if body.Type == nil {
		var f formErrors
		f.required("type")
		return nil, f.err()
	}
	typ := *body.Type
	onMessage := in.messageID != ""
	switch {
	case in.kind == kindAutocomplete:
		// An autocomplete interaction is answered with choices only.
		if typ != callbackAutocomplete {
			return nil, errBadCallback()
		}
	case typ == callbackMessage, typ == callbackDeferredMessage, typ == callbackModal && in.kind != kindModal:
	case (typ == callbackDeferredUpdate || typ == callbackUpdateMessage) && onMessage:
	default:
		return nil, errBadCallback()
	}
	data := &messageBody{}
	var choices []Choice
	switch typ {
	case callbackModal:
		if err := validateModal(body.Data); err != nil {
			return nil, err
		}
		in.modal = slices.Clone(body.Data)
	case callbackAutocomplete:
		var err *apiError
		if choices, err = validateChoices(body.Data); err != nil {
			return nil, err
		}
	default:
		if err := decodeJSON(body.Data, data, "data"); err != nil {
			return nil, err
		}
	}
	if typ == callbackMessage || typ == callbackUpdateMessage {
		if err := rq.uploadsFit(s.st.uploadLimit(in.guildID)); err != nil {
			return nil, err
		}
		if err := data.validate("data", len(rq.files), typ == callbackMessage); err != nil {
			return nil, err
		}
	}
	if in.acked {
		return nil, errAlreadyAcked
	}
	// Discord forgets an interaction that was not answered in time.
	if rq.arrived.Sub(in.createdAt) > s.scaled(interactionDeadline) {
		return nil, errUnknown(codeUnknownInteraction)
	}
	c := s.st.channels[in.channelID]
	switch typ {
	case callbackMessage:
		in.originalID = s.interactionPost(rq, in, c, data).id
	case callbackDeferredMessage:
		flags := flagLoading
		if data.Flags != nil {
			flags |= *data.Flags & flagEphemeral
		}
		in.originalID = s.interactionPost(rq, in, c, &messageBody{Flags: &flags}).id
	case callbackDeferredUpdate, callbackUpdateMessage:
		in.originalID = in.messageID
		if m, ok := s.st.messages[in.messageID]; ok && typ == callbackUpdateMessage {
			s.applyEdit(rq, m, data)
			s.emitUpdate(rq, m)
		}
	}
	in.acked, in.ackType, in.choices, in.via = true, typ, choices, ViaCallback
	if data.Content != nil {
		in.ackContent = *data.Content
	}
	in.ackLatency = rq.arrived.Sub(in.createdAt)
	s.stats.ackLatenciesMS = append(s.stats.ackLatenciesMS, ms(in.ackLatency))
	if rq.r.URL.Query().Get("with_response") != "true" {
		return nil, nil
	}
	answered := map[string]any{"id": in.id, "type": interactionType(in.kind)}
	if in.originalID != "" {
		answered["response_message_id"] = in.originalID
		answered["response_message_loading"] = typ == callbackDeferredMessage
		answered["response_message_ephemeral"] = data.Flags != nil && *data.Flags&flagEphemeral != 0
	}
	resp := map[string]any{"interaction": answered}
	if m, ok := s.st.messages[in.originalID]; ok {
		resp["resource"] = map[string]any{"type": typ, "message": s.st.renderMessage(m)}
	}
	return resp, nil
}

// validateModal checks a modal callback's data: custom_id, title, one to
// five rows, and the text inputs in them (an action row's one child, or
// a label's component).
func validateModal(raw json.RawMessage) *apiError {
	var modal struct {
		CustomID   *string `json:"custom_id"`
		Title      *string `json:"title"`
		Components []any   `json:"components"`
	}
	if err := decodeJSON(raw, &modal, "data"); err != nil {
		return err
	}
	var f formErrors
	f.requiredLen("data.custom_id", modal.CustomID, 1, maxCustomID)
	f.requiredLen("data.title", modal.Title, 1, 45)
	f.between("data.components", len(modal.Components), 1, maxActionRows)
	ids := map[string]bool{}
	for i, raw := range modal.Components {
		at := "data.components." + strconv.Itoa(i)
		row, _ := raw.(map[string]any)
		switch typ, _ := row["type"].(float64); typ {
		case 1:
			children, _ := row["components"].([]any)
			for j, c := range children {
				validateModalInput(&f, at+".components."+strconv.Itoa(j), c, ids)
			}
		case 18:
			validateModalInput(&f, at+".component", row["component"], ids)
		}
	}
	return f.err()
}

// Text input limits (Component Reference, "Text Input").
const (
	maxInputLabel       = 45
	maxInputLength      = 4000
	maxInputPlaceholder = 100
)

// validateModalInput checks a text input of a modal: its custom_id (1 to
// 100 characters, unique in the modal), label, lengths, value and
// placeholder. Other components a modal may hold are left alone.
func validateModalInput(f *formErrors, path string, raw any, ids map[string]bool) {
	c, _ := raw.(map[string]any)
	if typ, _ := c["type"].(float64); typ != 4 {
		return
	}
	id, hasID := c["custom_id"].(string)
	if !hasID {
		f.required(path + ".custom_id")
	} else {
		f.between(path+".custom_id", len([]rune(id)), 1, maxCustomID)
		onceIn(f, path+".custom_id", id, ids)
	}
	if label, ok := c["label"].(string); ok {
		f.maxLen(path+".label", len([]rune(label)), maxInputLabel)
	}
	if n, ok := c["min_length"].(float64); ok {
		f.numberBetween(path+".min_length", int(n), 0, maxInputLength)
	}
	if n, ok := c["max_length"].(float64); ok {
		f.numberBetween(path+".max_length", int(n), 1, maxInputLength)
	}
	if v, ok := c["value"].(string); ok {
		f.maxLen(path+".value", len([]rune(v)), maxInputLength)
	}
	if p, ok := c["placeholder"].(string); ok {
		f.maxLen(path+".placeholder", len([]rune(p)), maxInputPlaceholder)
	}
}

// validateChoices checks an autocomplete callback's data — a list of at
// most 25 choices, each a name of 1 to 100 characters and a value — and
// returns the choices.
func validateChoices(raw json.RawMessage) ([]Choice, *apiError) {
	var body struct {
		Choices *[]struct {
			Name  *string         `json:"name"`
			Value json.RawMessage `json:"value"`
		} `json:"choices"`
	}
	if err := decodeJSON(raw, &body, "data"); err != nil {
		return nil, err
	}
	var f formErrors
	if body.Choices == nil {
		f.required("data.choices")
		return nil, f.err()
	}
	f.maxLen("data.choices", len(*body.Choices), maxChoices)
	choices := []Choice{}
	for i, c := range *body.Choices {
		path := "data.choices." + strconv.Itoa(i)
		f.requiredLen(path+".name", c.Name, 1, 100)
		var value any
		if len(c.Value) == 0 || json.Unmarshal(c.Value, &value) != nil {
			f.required(path + ".value")
		}
		if c.Name != nil {
			choices = append(choices, Choice{Name: *c.Name, Value: value})
		}
	}
	return choices, f.err()
}

func ptr[T any](v T) *T { return &v }

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// interactionPost stores a message sent by the application for an
// interaction. Ephemeral messages stay out of the channel's history.
func (s *Server) interactionPost(rq *request, in *interaction, c *channel, body *messageBody) *message {
	m := s.buildMessage(rq, c, body, s.st.botID)
	m.webhookID, m.applicationID, m.interaction = s.st.appID, s.st.appID, in.id
	if m.flags&flagEphemeral != 0 {
		s.st.messages[m.id] = m
		return m
	}
	s.postMessage(rq, c, m)
	return m
}

// liveInteraction finds the interaction a /webhooks/{application_id}/{token}
// path names: 10015 when unknown or not acknowledged yet, 50027 once the
// token's 15 minutes are over.
func (s *Server) liveInteraction(rq *request) (*interaction, *apiError) {
	in := s.st.byToken[rq.params["webhook_token"]]
	if in == nil {
		return nil, errUnknown(codeUnknownWebhook)
	}
	if rq.arrived.Sub(in.createdAt) > s.scaled(interactionTokenTTL) {
		return nil, errInvalidToken
	}
	if !in.acked {
		return nil, errUnknown(codeUnknownWebhook)
	}
	return in, nil
}

// followUp sends a follow-up message. After a deferred response the
// first follow-up fills the "thinking" message, as Discord does.
func (s *Server) followUp(rq *request) (any, *apiError) {
	in, err := s.liveInteraction(rq)
	if err != nil {
		return nil, err
	}
	body, err := rq.decodeMessage(true, s.st.uploadLimit(in.guildID))
	if err != nil {
		return nil, err
	}
	if orig, ok := s.st.messages[in.originalID]; ok && orig.flags&flagLoading != 0 {
		orig.flags &^= flagLoading
		if body.Flags != nil {
			body.Flags = ptr(*body.Flags &^ flagEphemeral)
		}
		s.applyEdit(rq, orig, body)
		in.followups = append(in.followups, orig.id)
		return s.emitUpdate(rq, orig), nil
	}
	m := s.interactionPost(rq, in, s.st.channels[in.channelID], body)
	in.followups = append(in.followups, m.id)
	return s.st.renderMessage(m), nil
}

// interactionMessage resolves @original or a follow-up id of a live
// interaction.
func (s *Server) interactionMessage(rq *request) (*message, *apiError) {
	in, err := s.liveInteraction(rq)
	if err != nil {
		return nil, err
	}
	id := rq.params["message_id"]
	if id == "" {
		id = in.originalID
	}
	known := id == in.originalID
	for _, f := range in.followups {
		known = known || f == id
	}
	m, ok := s.st.messages[id]
	if !known || !ok {
		return nil, errUnknown(codeUnknownMessage)
	}
	return m, nil
}

func interactionType(kind string) int {
	switch kind {
	case kindComponent:
		return 3
	case kindModal:
		return 5
	case kindAutocomplete:
		return 4
	}
	return 2
}
