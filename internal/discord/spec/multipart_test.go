package spec

import (
	"bytes"
	"mime/multipart"
	"testing"
)

func TestMultipartFieldTwice(t *testing.T) {
	t.Parallel()
	v := testValidator(t)
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	mw.WriteField("payload_json", `{"content":"from payload_json"}`)
	mw.WriteField("content", "from a form field")
	mw.Close()
	r := newRequest("POST", "/api/v9/channels/1100000000000000001/messages", mw.FormDataContentType(), buf.String())
	checkErr(t, v.ValidateRequest(r, buf.Bytes()), `"content" is also in payload_json`)

	// Without payload_json, form fields are the body, as Discord reads them.
	buf.Reset()
	mw = multipart.NewWriter(&buf)
	mw.WriteField("content", "plain form field")
	mw.Close()
	r = newRequest("POST", "/api/v9/channels/1100000000000000001/messages", mw.FormDataContentType(), buf.String())
	checkErr(t, v.ValidateRequest(r, buf.Bytes()), "")
}

// Execute Webhook and Create Interaction Response take files[n] as
// Discord documents, though the spec's schemas for them declare none; the
// rest of the body is still judged.
func TestWebhookUploads(t *testing.T) {
	t.Parallel()
	v := testValidator(t)
	body := func(payload string) (string, string) {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		mw.WriteField("payload_json", payload)
		fw, _ := mw.CreateFormFile("files[0]", "a.txt")
		fw.Write([]byte("alpha"))
		mw.Close()
		return mw.FormDataContentType(), buf.String()
	}
	ct, b := body(`{"content":"logs"}`)
	r := newRequest("POST", "/api/v10/webhooks/1100000000000000001/tok", ct, b)
	checkErr(t, v.ValidateRequest(r, []byte(b)), "")
	ct, b = body(`{"content":"logs","nonsense":1}`)
	r = newRequest("POST", "/api/v10/webhooks/1100000000000000001/tok", ct, b)
	checkErr(t, v.ValidateRequest(r, []byte(b)), "nonsense")
	ct, b = body(`{"type":4,"data":{"content":"logs"}}`)
	r = newRequest("POST", "/api/v10/interactions/1100000000000000001/tok/callback", ct, b)
	checkErr(t, v.ValidateRequest(r, []byte(b)), "")
}
