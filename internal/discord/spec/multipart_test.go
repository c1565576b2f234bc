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
