package spec

import "encoding/json"

// The exceptions to Discord's OpenAPI document live here, in
// decodeMultipart (payload_json), in withoutWebhookUploads (files[n] on
// Execute Webhook and Create Interaction Response) and in requestForSpec
// (what discordgo sends). Each one covers something Discord really accepts
// or sends; nothing else is excused and no route is skipped.

// ignoredHeaders are request headers no operation declares that must not
// be reported as undeclared.
var ignoredHeaders = []string{
	// Discord records it in the audit log on every route that writes one; the
	// spec declares no header parameters at all.
	"X-Audit-Log-Reason",
	// Discord sends these with 429s; CheckRateLimitHeaders checks them.
	HeaderScope, HeaderGlobal, HeaderRetryAfter,
	// GitHub names a delivery's event in it, and Discord's GitHub-compatible
	// webhook reads it (docs: Execute GitHub-Compatible Webhook).
	"X-GitHub-Event",
	// Discord localizes application commands for the locale it names
	// (docs: Application Commands, "Retrieving localized commands").
	"X-Discord-Locale",
}

// responseForSpec returns the body the spec should judge for a response with
// status, and false when the spec describes nothing to judge it against.
func responseForSpec(status int, body []byte) ([]byte, bool) {
	switch {
	case status >= 500:
		// Discord's edge and upstreams answer 5xx, which the spec documents
		// for no route; CheckRateLimitHeaders still checks their headers.
		return nil, false
	case status >= 400 && status < 500 && status != 429:
		// The spec types the codes inside an error's errors object as
		// integers; Discord sends strings (BASE_TYPE_REQUIRED,
		// CHANNEL_PARENT_MAX_CHANNELS). CheckErrorBody checks that object.
		return withoutErrors(body), true
	}
	return body, true
}

// withoutErrors removes the errors field from a JSON object body; any other
// body is returned as it is, for the spec to reject.
func withoutErrors(body []byte) []byte {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil || obj == nil {
		return body
	}
	if _, ok := obj["errors"]; !ok {
		return body
	}
	delete(obj, "errors")
	return marshalOr(obj, body)
}

func marshalOr(obj map[string]json.RawMessage, fallback []byte) []byte {
	out, err := json.Marshal(obj)
	if err != nil {
		return fallback
	}
	return out
}
