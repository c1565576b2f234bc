package sim

import (
	"encoding/json"
	"strconv"
)

// messageBody is the JSON of message create and edit, webhook execute and
// interaction responses.
type messageBody struct {
	Content      *string          `json:"content"`
	Embeds       *[]any           `json:"embeds"`
	Components   *[]any           `json:"components"`
	Attachments  *[]attachmentRef `json:"attachments"`
	Flags        *int             `json:"flags"`
	TTS          bool             `json:"tts"`
	Nonce        json.RawMessage  `json:"nonce"`
	EnforceNonce bool             `json:"enforce_nonce"`
	Username     *string          `json:"username"`
	AvatarURL    string           `json:"avatar_url"`
	StickerIDs   []string         `json:"sticker_ids"`
	ThreadName   *string          `json:"thread_name"` // webhook execute: a forum post to create
}

type attachmentRef struct {
	ID          json.RawMessage `json:"id"`
	Filename    string          `json:"filename"`
	Description string          `json:"description"`
}

// Message flags the simulator understands.
const (
	flagEphemeral       = 1 << 6
	flagSuppressEmbeds  = 1 << 2
	flagHasThread       = 1 << 5
	flagComponentsV2    = 1 << 15
	flagSuppressNotifs  = 1 << 12
	allowedCreateFlags  = flagEphemeral | flagSuppressEmbeds | flagSuppressNotifs | flagComponentsV2
	maxContent          = 2000
	maxEmbeds           = 10
	maxActionRows       = 5
	maxCustomID         = 100
	maxNonce            = 25
	maxEmbedTitle       = 256
	maxEmbedDescription = 4096
	maxEmbedFields      = 25
	maxFieldName        = 256
	maxFieldValue       = 1024
	maxFooterText       = 2048
	maxAuthorName       = 256
	maxEmbedTotal       = 6000 // every embed's text together
)

// nonce returns the nonce as Discord echoes it: the string, or the
// integer's digits.
func (b *messageBody) nonce() string {
	if len(b.Nonce) == 0 || string(b.Nonce) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(b.Nonce, &s) == nil {
		return s
	}
	return string(b.Nonce)
}

// validate applies Discord's message limits. prefix locates the message in
// the body ("data" in interaction responses); files is the number of
// uploaded files; creating says whether an empty message is an error.
func (b *messageBody) validate(prefix string, files int, creating bool) *apiError {
	f := formErrors{prefix: prefix}
	if b.Content != nil {
		f.maxLen("content", len([]rune(*b.Content)), maxContent)
	}
	if b.Embeds != nil {
		f.maxLen("embeds", len(*b.Embeds), maxEmbeds)
		total := 0
		for i, e := range *b.Embeds {
			total += validateEmbed(&f, "embeds."+strconv.Itoa(i), e)
		}
		if total > maxEmbedTotal {
			f.add("embeds", "MAX_EMBED_SIZE_EXCEEDED", "Embed size exceeds maximum size of "+strconv.Itoa(maxEmbedTotal))
		}
	}
	if b.Components != nil && (b.Flags == nil || *b.Flags&flagComponentsV2 == 0) {
		f.maxLen("components", len(*b.Components), maxActionRows)
	}
	if b.Components != nil {
		ids := map[string]bool{}
		for i, c := range *b.Components {
			validateComponent(&f, "components."+strconv.Itoa(i), c, ids)
		}
	}
	if n := b.nonce(); len(n) > maxNonce {
		f.maxLen("nonce", len(n), maxNonce)
	}
	if b.Flags != nil && *b.Flags&^allowedCreateFlags != 0 {
		f.add("flags", "MESSAGE_FLAGS_INVALID", "Invalid message flags")
	}
	if err := f.err(); err != nil {
		return err
	}
	if creating && b.empty(files) {
		return errEmptyMessage
	}
	return nil
}

func (b *messageBody) empty(files int) bool {
	return (b.Content == nil || *b.Content == "") &&
		(b.Embeds == nil || len(*b.Embeds) == 0) &&
		(b.Components == nil || len(*b.Components) == 0) &&
		len(b.StickerIDs) == 0 && files == 0
}

// validateEmbed applies an embed's limits (Message Resource, "Embed
// Limits") and returns its text as Discord counts it toward the 6,000
// characters all of a message's embeds may hold.
func validateEmbed(f *formErrors, path string, raw any) int {
	e, ok := raw.(map[string]any)
	if !ok {
		f.notObject(path)
		return 0
	}
	size := 0
	text := func(path string, v any, max int) {
		if s, ok := v.(string); ok {
			n := len([]rune(s))
			f.maxLen(path, n, max)
			size += n
		}
	}
	text(path+".title", e["title"], maxEmbedTitle)
	text(path+".description", e["description"], maxEmbedDescription)
	if footer, ok := e["footer"].(map[string]any); ok {
		text(path+".footer.text", footer["text"], maxFooterText)
	}
	if author, ok := e["author"].(map[string]any); ok {
		text(path+".author.name", author["name"], maxAuthorName)
	}
	fields, _ := e["fields"].([]any)
	f.maxLen(path+".fields", len(fields), maxEmbedFields)
	for i, raw := range fields {
		at := path + ".fields." + strconv.Itoa(i)
		field, ok := raw.(map[string]any)
		if !ok {
			f.notObject(at)
			continue
		}
		for _, k := range []struct {
			name string
			max  int
		}{{"name", maxFieldName}, {"value", maxFieldValue}} {
			// An empty name or value is missing, to Discord too.
			if v, _ := field[k.name].(string); v == "" {
				f.required(at + "." + k.name)
				continue
			}
			text(at+"."+k.name, field[k.name], k.max)
		}
	}
	return size
}

// Component limits (Discord's Component Reference: Action Row, Button,
// String Select and the other selects).
const (
	maxRowWidth     = 5 // five buttons, or one select
	maxButtonLabel  = 80
	maxSelectValues = 25
	maxOptionText   = 100
)

// isSelect reports whether a component type is a select menu (string,
// user, role, mentionable or channel), which fills a whole action row.
func isSelect(typ float64) bool { return typ == 3 || (typ >= 5 && typ <= 8) }

// validateComponent checks a message component and its children; ids
// holds the custom_ids seen so far in the message, which "must not share
// the same custom_id" (Component Reference).
func validateComponent(f *formErrors, path string, raw any, ids map[string]bool) {
	c, ok := raw.(map[string]any)
	if !ok {
		f.notObject(path)
		return
	}
	if id, ok := c["custom_id"].(string); ok {
		f.maxLen(path+".custom_id", len([]rune(id)), maxCustomID)
		onceIn(f, path+".custom_id", id, ids)
	}
	typ, _ := c["type"].(float64)
	switch {
	case typ == 1:
		validateRow(f, path, c, ids)
	case typ == 2:
		if label, ok := c["label"].(string); ok {
			f.maxLen(path+".label", len([]rune(label)), maxButtonLabel)
		}
		_, hasID := c["custom_id"]
		_, hasURL := c["url"]
		_, hasSKU := c["sku_id"]
		if !hasID && !hasURL && !hasSKU {
			f.add(path+".custom_id", "BUTTON_COMPONENT_CUSTOM_ID_REQUIRED", "A custom id is required")
		}
	case isSelect(typ):
		validateSelect(f, path, c, typ)
	}
	if children, ok := c["components"].([]any); ok && typ != 1 {
		for i, child := range children {
			validateComponent(f, path+".components."+strconv.Itoa(i), child, ids)
		}
	}
}

// onceIn records a component's custom_id among ids, those already seen
// in its message or modal, and refuses one seen before: components "must
// not share the same custom_id" (Component Reference).
func onceIn(f *formErrors, path, id string, ids map[string]bool) {
	if ids[id] {
		f.add(path, "COMPONENT_CUSTOM_ID_DUPLICATED", "Component custom id was already specified")
	}
	ids[id] = true
}

// validateRow checks an action row: one to five children, and no more
// than fit its width (a select takes all of it).
func validateRow(f *formErrors, path string, c map[string]any, ids map[string]bool) {
	children, ok := c["components"].([]any)
	if !ok {
		f.required(path + ".components")
		return
	}
	f.between(path+".components", len(children), 1, maxRowWidth)
	width := 0
	for i, raw := range children {
		child := path + ".components." + strconv.Itoa(i)
		validateComponent(f, child, raw, ids)
		if m, ok := raw.(map[string]any); ok {
			w := 1
			if typ, _ := m["type"].(float64); isSelect(typ) {
				w = maxRowWidth
			}
			if width += w; width > maxRowWidth && len(children) <= maxRowWidth {
				f.add(child, "COMPONENT_LAYOUT_WIDTH_EXCEEDED", "The specified component exceeds the maximum width")
			}
		}
	}
}

// validateSelect checks a select menu's values range and, for a string
// select, its 1 to 25 options: min_values 0–25 and max_values 1–25
// (default 1 each), min_values no more than max_values, and max_values no
// more than there are options to pick.
func validateSelect(f *formErrors, path string, c map[string]any, typ float64) {
	lo, hi := 1, 1
	if v, ok := c["min_values"].(float64); ok {
		lo = int(v)
	}
	if v, ok := c["max_values"].(float64); ok {
		hi = int(v)
	}
	inRange := lo >= 0 && lo <= maxSelectValues && hi >= 1 && hi <= maxSelectValues
	f.numberBetween(path+".min_values", lo, 0, maxSelectValues)
	f.numberBetween(path+".max_values", hi, 1, maxSelectValues)
	if inRange && lo > hi {
		f.numberBetween(path+".min_values", lo, 0, hi)
	}
	if typ != 3 {
		return
	}
	options, ok := c["options"].([]any)
	if !ok {
		f.required(path + ".options")
		return
	}
	f.between(path+".options", len(options), 1, maxSelectValues)
	if inRange && len(options) > 0 && hi > len(options) {
		f.numberBetween(path+".max_values", hi, 1, len(options))
	}
	for i, raw := range options {
		opt := path + ".options." + strconv.Itoa(i)
		o, ok := raw.(map[string]any)
		if !ok {
			f.notObject(opt)
			continue
		}
		for _, field := range []string{"label", "value"} {
			v, _ := o[field].(string)
			if _, present := o[field]; !present {
				f.required(opt + "." + field)
				continue
			}
			f.between(opt+"."+field, len([]rune(v)), 1, maxOptionText)
		}
		if d, ok := o["description"].(string); ok {
			f.maxLen(opt+".description", len([]rune(d)), maxOptionText)
		}
	}
}

// normalizeComponents fills what Discord fills in stored components: a
// numeric id on every component and the select and text input defaults.
func normalizeComponents(list []any) []any {
	next := 1
	var walk func(list []any)
	walk = func(list []any) {
		for _, raw := range list {
			c, ok := raw.(map[string]any)
			if !ok {
				continue
			}
			if _, ok := c["id"]; !ok {
				c["id"] = next
			}
			next++
			typ, _ := c["type"].(float64)
			switch typ {
			case 3, 5, 6, 7, 8:
				setDefault(c, "min_values", 1)
				setDefault(c, "max_values", 1)
				if typ == 3 {
					setDefault(c, "options", []any{})
				}
			case 4:
				setDefault(c, "min_length", 0)
				setDefault(c, "max_length", 4000)
			case 17:
				setDefault(c, "accent_color", nil)
				setDefault(c, "spoiler", false)
			}
			if children, ok := c["components"].([]any); ok {
				walk(children)
			}
		}
	}
	walk(list)
	return list
}

// normalizeEmbeds marks embeds "rich" and gives fields their inline flag,
// as Discord stores them.
func normalizeEmbeds(list []any) []any {
	for _, raw := range list {
		e, ok := raw.(map[string]any)
		if !ok {
			continue
		}
		setDefault(e, "type", "rich")
		if fields, ok := e["fields"].([]any); ok {
			for _, fr := range fields {
				if fm, ok := fr.(map[string]any); ok {
					setDefault(fm, "inline", false)
				}
			}
		}
	}
	return list
}

func setDefault(m map[string]any, k string, v any) {
	if _, ok := m[k]; !ok {
		m[k] = v
	}
}
