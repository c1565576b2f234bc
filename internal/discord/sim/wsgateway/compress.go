package wsgateway

import (
	"bytes"
	"compress/zlib"
)

// zlibStream is Discord's zlib-stream transport compression
// (?compress=zlib-stream): one zlib context for the whole connection, and
// every payload flushed with a sync flush, so each binary frame ends in
// 00 00 ff ff and the client inflates payloads as they arrive with a single
// inflater. Only what the gateway sends is compressed.
type zlibStream struct {
	buf bytes.Buffer
	w   *zlib.Writer
}

func newZlibStream() *zlibStream {
	z := &zlibStream{}
	z.w = zlib.NewWriter(&z.buf)
	return z
}

// compress returns payload's bytes in the stream, valid until the next call.
func (z *zlibStream) compress(payload []byte) ([]byte, error) {
	z.buf.Reset()
	if _, err := z.w.Write(payload); err != nil {
		return nil, err
	}
	if err := z.w.Flush(); err != nil {
		return nil, err
	}
	return z.buf.Bytes(), nil
}
