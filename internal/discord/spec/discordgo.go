package spec

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"strings"
)

// requestForSpec returns the request body the spec should judge: the body
// without the fields discordgo v0.29 sends that Discord ignores. Each rule
// names its route and fields; everything else is judged as sent, and a field
// a rule names is judged too when it carries a real value.
func requestForSpec(r *http.Request, body []byte) []byte {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "application/json" {
		return body
	}
	var fix func(any)
	switch path := r.URL.Path; {
	case strings.HasSuffix(path, "/commands"):
		// ApplicationCommandOption has no omitempty on options,
		// channel_types, choices and autocomplete, so every option carries
		// them, unset, including option types that have no such field.
		fix = func(v any) { dropOptionZeroes(v, false) }
	case strings.HasSuffix(path, "/callback"):
		// InteractionResponseData has no omitempty on tts, content,
		// components and embeds, so a modal or an update carries them unset.
		fix = func(v any) {
			if obj, ok := v.(map[string]any); ok {
				dropZeroes(obj["data"], "tts", "content", "components", "embeds")
			}
		}
	case r.Method == http.MethodPatch && isMessagePath(path):
		// MessageEdit's routing fields ID and Channel have no json tag, so
		// every edit carries them as "ID" and "Channel".
		fix = func(v any) {
			if obj, ok := v.(map[string]any); ok {
				delete(obj, "ID")
				delete(obj, "Channel")
			}
		}
	default:
		return body
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return body
	}
	fix(v)
	out, err := json.Marshal(v)
	if err != nil {
		return body
	}
	return out
}

// isMessagePath reports whether path is /api/v*/channels/{id}/messages/{id}.
func isMessagePath(path string) bool {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	return len(segs) == 6 && segs[2] == "channels" && segs[4] == "messages"
}

// dropOptionZeroes removes discordgo's unset option fields from every object
// in an options array below v; inOptions says v is such an object.
func dropOptionZeroes(v any, inOptions bool) {
	switch v := v.(type) {
	case []any:
		for _, item := range v {
			dropOptionZeroes(item, inOptions)
		}
	case map[string]any:
		if inOptions {
			dropZeroes(v, "options", "channel_types", "choices", "autocomplete")
		}
		if opts, ok := v["options"].([]any); ok {
			dropOptionZeroes(opts, true)
		}
	}
}

// dropZeroes deletes the named keys of v, if v is an object, whose values
// are JSON zero values: null, false or "".
func dropZeroes(v any, keys ...string) {
	obj, ok := v.(map[string]any)
	if !ok {
		return
	}
	for _, k := range keys {
		val, ok := obj[k]
		if ok && (val == nil || val == false || val == "") {
			delete(obj, k)
		}
	}
}
