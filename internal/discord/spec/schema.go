package spec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"net/url"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// docURL names the document for the compiler: schemas are compiled by their
// JSON pointer in it, and its $refs resolve against it.
const docURL = "https://discord.com/api/v10/openapi.json"

// document is Discord's OpenAPI document, tightened (strict.go), with the
// compiler that turns its schemas into validators on first use.
type document struct {
	tree map[string]any

	mu       sync.Mutex // the compiler is not safe for concurrent use
	compiler *jsonschema.Compiler
}

func newDocument(tree map[string]any) (*document, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	// Formats are asserted: a timestamp must be a date-time, an int32 fit
	// in 32 bits. Discord's own nonce, snowflake and double add nothing
	// the schemas' other keywords do not check, so they stay unknown.
	c.AssertFormat()
	c.RegisterFormat(&jsonschema.Format{Name: "int32", Validate: integerFormat(32)})
	c.RegisterFormat(&jsonschema.Format{Name: "int64", Validate: integerFormat(64)})
	if err := c.AddResource(docURL, tree); err != nil {
		return nil, err
	}
	return &document{tree: tree, compiler: c}, nil
}

// lazySchema is a schema of the document, compiled on first use: a test
// binary touches a few dozen of the document's operations.
type lazySchema struct {
	doc *document
	raw any    // as written, to coerce parameter strings to its types
	ptr string // JSON pointer in the document

	once     sync.Once
	compiled *jsonschema.Schema
	err      error
}

func (d *document) lazy(raw any, ptr string) *lazySchema {
	return &lazySchema{doc: d, raw: raw, ptr: ptr}
}

func (l *lazySchema) schema() (*jsonschema.Schema, error) {
	l.once.Do(func() {
		var frag strings.Builder
		for _, tok := range strings.Split(strings.TrimPrefix(l.ptr, "/"), "/") {
			frag.WriteByte('/')
			frag.WriteString(url.PathEscape(tok))
		}
		l.doc.mu.Lock()
		defer l.doc.mu.Unlock()
		l.compiled, l.err = l.doc.compiler.Compile(docURL + "#" + frag.String())
		if l.err != nil {
			l.err = fmt.Errorf("compile schema %s: %w", l.ptr, l.err)
		}
	})
	return l.compiled, l.err
}

// validate checks v, returning the compiler's error, if any, as the
// validation's.
func (l *lazySchema) validate(v any) error {
	s, err := l.schema()
	if err != nil {
		return err
	}
	return s.Validate(v)
}

// integerFormat asserts that an integer fits in bits, as OpenAPI's int32
// and int64 formats say.
func integerFormat(bits uint) func(any) error {
	limit := new(big.Int).Lsh(big.NewInt(1), bits-1) // 2^(bits-1)
	lowest := new(big.Int).Neg(limit)
	return func(v any) error {
		n, ok := v.(json.Number)
		if !ok {
			return nil
		}
		i, ok := new(big.Int).SetString(n.String(), 10)
		if !ok {
			return nil // not an integer: the type keyword's to report
		}
		if i.Cmp(lowest) < 0 || i.Cmp(limit) >= 0 {
			return fmt.Errorf("%s is outside the int%d range", n, bits)
		}
		return nil
	}
}

// decodeJSON decodes a JSON body as the validator wants it: numbers as
// json.Number, so 64-bit integers keep every digit.
func decodeJSON(body []byte) (any, error) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("body is not JSON: %w", err)
	}
	return v, nil
}
