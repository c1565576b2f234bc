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

func validateComponent(f *formErrors, path string, raw any) {
	c, ok := raw.(map[string]any)
	if !ok {
		f.add(path, "MODEL_TYPE_CONVERT", "Only dictionaries may be used in a ModelType")
		return
	}
	if id, ok := c["custom_id"].(string); ok {
		f.maxLen(path+".custom_id", len([]rune(id)), maxCustomID)
	}
	if typ, _ := c["type"].(float64); typ == 2 {
		_, hasID := c["custom_id"]
		_, hasURL := c["url"]
		_, hasSKU := c["sku_id"]
		if !hasID && !hasURL && !hasSKU {
			f.add(path+".custom_id", "BUTTON_COMPONENT_CUSTOM_ID_REQUIRED", "A custom id is required")
		}
	}
	if children, ok := c["components"].([]any); ok {
		if typ, _ := c["type"].(float64); typ == 1 {
			f.maxLen(path+".components", len(children), 5)
		}
		for i, child := range children {
			validateComponent(f, path+".components."+strconv.Itoa(i), child)
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
