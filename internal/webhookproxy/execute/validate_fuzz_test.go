package execute

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"strings"
	"testing"
	"unicode/utf8"
)

// fuzzUpload is the upload limit the fuzz target decodes with: small, so
// inputs cross it.
const fuzzUpload = 64

// A request body, whatever its content type and route variant: decoding
// is deterministic; a refusal is one of Discord's error answers, 413 only
// for files over the upload limit; and what is accepted, read
// independently as plain JSON, keeps every limit validate claims, so
// Discord never refuses what the proxy acknowledged.
func FuzzDecode(f *testing.F) {
	long := strings.Repeat("x", 2001)
	for _, body := range []string{
		`{"content":"hello"}`, `{"content":"` + long + `"}`, `{"CONTENT":"hello"}`, `{"content":"hi","Content":""}`,
		`{"content":"","embeds":[{"description":"x"}]}`, `{"embeds":[{"Description":"` + strings.Repeat("y", 6001) + `","description":"z"}]}`,
		`{"embeds":[{"fields":[{"name":"a","value":"b"}],"footer":{"text":"c"},"author":{"name":"d"}}]}`,
		`{"embeds":[{"fields":[{"name":"a","value":"` + strings.Repeat("v", 1025) + `"},{"name":"","value":"b"}]}]}`,
		`{"embeds":[{"title":"` + strings.Repeat("t", 257) + `","author":{"name":5}}]}`,
		`{"embeds":[{},{},{},{},{},{},{},{},{},{},{}]}`, `{"embeds":"x"}`, `{"embeds":[5]}`, `{"username":""}`,
		`{"content":"x","username":"` + strings.Repeat("u", 81) + `"}`, `{"poll":null}`, `{"poll":{"question":{"text":"?"}}}`,
		`{"sticker_ids":["1"]}`, `{"components":[{"type":1}]}`, `{"content":5}`, "{\"content\":\"\xff\"}", `[]`, `null`, `{`, ``,
		`{"content":"x","username":"Clyde"}`, `{"content":"x","username":"my DISCORD relay"}`, `{"content":"x","username":"Disсord"}`,
	} {
		f.Add("application/json", []byte(body), "")
	}
	f.Add("application/x-www-form-urlencoded", []byte("content=hello&username=bot&tts=true"), "")
	f.Add("application/x-www-form-urlencoded", []byte("content=hi&tts=maybe"), "")
	f.Add("application/x-www-form-urlencoded", []byte("embeds=x"), "")
	f.Add("application/x-www-form-urlencoded", []byte("content=%zz"), "")
	var mp bytes.Buffer
	w := multipart.NewWriter(&mp)
	w.WriteField("payload_json", `{"content":"with a file"}`)
	fw, _ := w.CreateFormFile("files[0]", "a.txt")
	fw.Write([]byte("file"))
	w.Close()
	f.Add(w.FormDataContentType(), mp.Bytes(), "")
	f.Add(w.FormDataContentType(), mp.Bytes()[:mp.Len()/2], "")
	f.Add("multipart/form-data", mp.Bytes(), "")
	for _, size := range []int{fuzzUpload, fuzzUpload + 1} {
		var big bytes.Buffer
		w := multipart.NewWriter(&big)
		w.WriteField("payload_json", `{"content":"a large file"}`)
		fw, _ := w.CreateFormFile("files[0]", "big.bin")
		fw.Write(bytes.Repeat([]byte("b"), size))
		w.Close()
		f.Add(w.FormDataContentType(), big.Bytes(), "")
	}
	var fields bytes.Buffer
	fw2 := multipart.NewWriter(&fields)
	fw2.WriteField("content", "no payload_json")
	fw2.WriteField("username", "Discord Bot")
	fw2.Close()
	f.Add(fw2.FormDataContentType(), fields.Bytes(), "")
	f.Add("application/json", []byte(`{"text":"slack"}`), "slack")
	f.Add("application/json", []byte(`{"action":"opened","Repository":{}}`), "github")
	f.Add("application/json", []byte("{\"text\":\"\xff\"}"), "slack")
	f.Add("application/json", []byte(`{"text":`), "github")
	f.Fuzz(func(t *testing.T, contentType string, body []byte, variant string) {
		if variant != "" && variant != "slack" && variant != "github" {
			return // the router answers 404 to any other
		}
		ct, stored, apiErr := Decode(contentType, body, variant, fuzzUpload)
		ct2, stored2, apiErr2 := Decode(contentType, body, variant, fuzzUpload)
		if ct != ct2 || !bytes.Equal(stored, stored2) || errJSON(t, apiErr) != errJSON(t, apiErr2) {
			t.Fatalf("decoded differently twice: %q %q %v, then %q %q %v", ct, stored, apiErr, ct2, stored2, apiErr2)
		}
		if apiErr != nil {
			switch {
			case apiErr.Status == 413:
				if n := fileBytes(contentType, body); apiErr.Code != 40005 || n <= fuzzUpload {
					t.Fatalf("refused with %+v for %d bytes of files: want 40005, and only over %d", apiErr, n, fuzzUpload)
				}
			case apiErr.Status != 400 || apiErr.Code == 0 || apiErr.Message == "":
				t.Fatalf("refused with %+v: want a 400 with Discord's code and message", apiErr)
			}
			return
		}
		if variant != "" {
			if ct != "application/json" || !utf8.Valid(stored) || !json.Valid(stored) {
				t.Fatalf("%s body stored as %q %q: want JSON", variant, ct, stored)
			}
			return
		}
		raw, files, mErr := Message(ct, stored)
		if mErr != nil {
			t.Fatalf("accepted %q %q, which does not read back: %v", ct, stored, mErr)
		}
		if raw == nil {
			raw = []byte("{}")
		}
		if why := breaksLimits(raw, files.Count); why != "" {
			t.Fatalf("accepted %q (%d files): %s", raw, files.Count, why)
		}
		if n := fileBytes(ct, stored); n > fuzzUpload {
			t.Fatalf("accepted %d bytes of files, over the limit of %d", n, fuzzUpload)
		}
	})
}

// fileBytes counts the bytes of a body's files as a multipart reader
// sees them: the parts with a filename.
func fileBytes(contentType string, body []byte) int64 {
	media, params, err := mime.ParseMediaType(contentType)
	if err != nil || media != "multipart/form-data" {
		return 0
	}
	r := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	var n int64
	for {
		p, err := r.NextPart()
		if err != nil {
			return n
		}
		if p.FileName() != "" {
			c, _ := io.Copy(io.Discard, p)
			n += c
		}
	}
}

func errJSON(t *testing.T, e *Error) string {
	if e == nil {
		return ""
	}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatalf("%v does not encode: %v", e, err)
	}
	return string(b)
}

// breaksLimits reads a message body the way Discord does, as plain JSON
// with case-sensitive keys, and says which of Discord's limits it breaks.
func breaksLimits(raw []byte, files int) string {
	if !utf8.Valid(raw) {
		return "not UTF-8"
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return "not a JSON object: " + err.Error()
	}
	length := func(v any) int { s, _ := v.(string); return utf8.RuneCountInString(s) }
	obj := func(v any) map[string]any { o, _ := v.(map[string]any); return o }
	content, _ := m["content"].(string)
	if length(content) > maxContent {
		return "content over 2000 characters"
	}
	if u, ok := m["username"]; ok && u != nil && (length(u) < 1 || length(u) > maxUsername) {
		return "username not 1 to 80 characters"
	}
	if u, _ := m["username"].(string); strings.Contains(strings.ToLower(u), "clyde") || strings.Contains(strings.ToLower(u), "discord") {
		return "username containing clyde or discord"
	}
	embeds, _ := m["embeds"].([]any)
	if len(embeds) > maxEmbeds {
		return "over 10 embeds"
	}
	total := 0
	for _, e := range embeds {
		e := obj(e)
		title, description, footer, author := length(e["title"]), length(e["description"]), length(obj(e["footer"])["text"]), length(obj(e["author"])["name"])
		if title > maxEmbedTitle || description > maxEmbedDescription || footer > maxFooterText || author > maxAuthorName {
			return "an embed's title, description, footer or author over its limit"
		}
		total += title + description + footer + author
		fields, _ := e["fields"].([]any)
		if len(fields) > maxEmbedFields {
			return "over 25 fields"
		}
		for _, f := range fields {
			name, value := length(obj(f)["name"]), length(obj(f)["value"])
			if name < 1 || name > maxFieldName || value < 1 || value > maxFieldValue {
				return "a field's name or value empty or over its limit"
			}
			total += name + value
		}
	}
	if total > maxEmbedTotal {
		return "embeds over 6000 characters"
	}
	if files > maxFiles {
		return "over 10 files"
	}
	components, _ := m["components"].([]any)
	stickers, _ := m["sticker_ids"].([]any)
	if content == "" && len(embeds) == 0 && len(components) == 0 && m["poll"] == nil && len(stickers) == 0 && files == 0 {
		return "empty"
	}
	return ""
}
