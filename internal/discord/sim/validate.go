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
		for i, e := range *b.Embeds {
			validateEmbed(&f, "embeds."+strconv.Itoa(i), e)
		}
	}
	if b.Components != nil && (b.Flags == nil || *b.Flags&flagComponentsV2 == 0) {
		f.maxLen("components", len(*b.Components), maxActionRows)
	}
	if b.Components != nil {
		for i, c := range *b.Components {
			validateComponent(&f, "components."+strconv.Itoa(i), c)
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

func validateEmbed(f *formErrors, path string, raw any) {
	e, ok := raw.(map[string]any)
	if !ok {
		f.add(path, "MODEL_TYPE_CONVERT", "Only dictionaries may be used in a ModelType")
		return
	}
	if t, ok := e["title"].(string); ok {
		f.maxLen(path+".title", len([]rune(t)), maxEmbedTitle)
	}
	if d, ok := e["description"].(string); ok {
		f.maxLen(path+".description", len([]rune(d)), maxEmbedDescription)
	}
	if fields, ok := e["fields"].([]any); ok {
		f.maxLen(path+".fields", len(fields), maxEmbedFields)
	}
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

func validateComponent(f *formErrors, path string, raw any) {
	c, ok := raw.(map[string]any)
	if !ok {
		f.add(path, "MODEL_TYPE_CONVERT", "Only dictionaries may be used in a ModelType")
		return
	}
	if id, ok := c["custom_id"].(string); ok {
		f.maxLen(path+".custom_id", len([]rune(id)), maxCustomID)
	}
	typ, _ := c["type"].(float64)
	switch {
	case typ == 1:
		validateRow(f, path, c)
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
			validateComponent(f, path+".components."+strconv.Itoa(i), child)
		}
	}
}

// validateRow checks an action row: one to five children, and no more
// than fit its width (a select takes all of it).
func validateRow(f *formErrors, path string, c map[string]any) {
	children, ok := c["components"].([]any)
	if !ok {
		f.required(path + ".components")
		return
	}
	f.between(path+".components", len(children), 1, maxRowWidth)
	width := 0
	for i, raw := range children {
		child := path + ".components." + strconv.Itoa(i)
		validateComponent(f, child, raw)
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
			f.add(opt, "MODEL_TYPE_CONVERT", "Only dictionaries may be used in a ModelType")
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
