package spec

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/pb33f/jsonschema/v6"
	"github.com/pb33f/libopenapi-validator/cache"
	"github.com/pb33f/libopenapi-validator/config"
	"github.com/pb33f/libopenapi-validator/helpers"
	"github.com/pb33f/libopenapi/datamodel/high/base"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
	"github.com/pb33f/libopenapi/utils"
)

// schemaCache makes libopenapi-validator fast on Discord's document, which
// it would otherwise make slow in two ways:
//   - Building a validator compiles every schema in the document unless the
//     cache already holds it: about ten seconds, where a test suite touches a
//     few dozen operations. While building, Load reports every key as
//     present (with no entry, which every reader treats as a miss), so each
//     schema is compiled on first use instead.
//   - Strict mode matches data against oneOf/anyOf/allOf variants with
//     schemas it looks up by their bare hash, never stores, and so compiles
//     again on every request: about ten milliseconds a request. The cache
//     knows every variant in the document by that hash and compiles each
//     once, the way strict mode does.
type schemaCache struct {
	building atomic.Bool
	entries  sync.Map // uint64 -> *cache.SchemaCacheEntry
	variants map[uint64]*base.Schema
	opts     *config.ValidationOptions
	version  float32
}

func newSchemaCache(doc *v3.Document, opts ...config.Option) *schemaCache {
	c := &schemaCache{
		variants: make(map[uint64]*base.Schema),
		opts:     config.NewValidationOptions(opts...),
		version:  helpers.VersionToFloat(doc.Version),
	}
	c.building.Store(true)
	indexVariants(doc, c.variants)
	return c
}

// built ends the building phase; the validator must not be built again.
func (c *schemaCache) built() { c.building.Store(false) }

func (c *schemaCache) Load(key uint64) (*cache.SchemaCacheEntry, bool) {
	if c.building.Load() {
		return nil, true
	}
	if v, ok := c.entries.Load(key); ok {
		return v.(*cache.SchemaCacheEntry), true
	}
	s, ok := c.variants[key]
	if !ok {
		return nil, false
	}
	// Validator.mu makes this the only compilation under way.
	compiled, err := c.compileVariant(s, key)
	if err != nil {
		return nil, false
	}
	entry := &cache.SchemaCacheEntry{Schema: s, CompiledSchema: compiled}
	c.entries.Store(key, entry)
	return entry, true
}

func (c *schemaCache) Store(key uint64, value *cache.SchemaCacheEntry) {
	if value != nil {
		c.entries.Store(key, value)
	}
}

func (c *schemaCache) Range(f func(key uint64, value *cache.SchemaCacheEntry) bool) {
	c.entries.Range(func(k, v any) bool {
		return f(k.(uint64), v.(*cache.SchemaCacheEntry))
	})
}

// compileVariant compiles s as strict mode's matcher does.
func (c *schemaCache) compileVariant(s *base.Schema, key uint64) (*jsonschema.Schema, error) {
	rendered, err := s.RenderInlineWithContext(base.NewInlineRenderContextForValidation())
	if err != nil {
		return nil, fmt.Errorf("render schema %x: %w", key, err)
	}
	js, err := utils.ConvertYAMLtoJSON(rendered)
	if err != nil {
		return nil, fmt.Errorf("convert schema %x: %w", key, err)
	}
	return helpers.NewCompiledSchemaWithVersion(fmt.Sprintf("strict-match-%x", key), js, c.opts, c.version)
}

// indexVariants records, by hash, every schema that appears as a oneOf,
// anyOf or allOf member below an operation's request or response bodies.
func indexVariants(doc *v3.Document, into map[uint64]*base.Schema) {
	seen := make(map[*base.SchemaProxy]bool)
	var walk func(p *base.SchemaProxy, variant bool)
	walk = func(p *base.SchemaProxy, variant bool) {
		if p == nil || seen[p] {
			return
		}
		seen[p] = true
		s := p.Schema()
		if s == nil {
			return
		}
		if variant && s.GoLow() != nil {
			into[s.GoLow().Hash()] = s
		}
		for _, group := range [][]*base.SchemaProxy{s.AllOf, s.OneOf, s.AnyOf} {
			for _, m := range group {
				walk(m, true)
			}
		}
		for _, m := range s.PrefixItems {
			walk(m, false)
		}
		if s.Properties != nil {
			for pair := s.Properties.First(); pair != nil; pair = pair.Next() {
				walk(pair.Value(), false)
			}
		}
		if s.Items != nil && s.Items.IsA() {
			walk(s.Items.A, false)
		}
		if s.AdditionalProperties != nil && s.AdditionalProperties.IsA() {
			walk(s.AdditionalProperties.A, false)
		}
	}
	if doc.Paths == nil || doc.Paths.PathItems == nil {
		return
	}
	for path := doc.Paths.PathItems.First(); path != nil; path = path.Next() {
		for op := path.Value().GetOperations().First(); op != nil; op = op.Next() {
			o := op.Value()
			if o.RequestBody != nil && o.RequestBody.Content != nil {
				for mt := o.RequestBody.Content.First(); mt != nil; mt = mt.Next() {
					walk(mt.Value().Schema, false)
				}
			}
			if o.Responses == nil || o.Responses.Codes == nil {
				continue
			}
			for code := o.Responses.Codes.First(); code != nil; code = code.Next() {
				if code.Value() == nil || code.Value().Content == nil {
					continue
				}
				for mt := code.Value().Content.First(); mt != nil; mt = mt.Next() {
					walk(mt.Value().Schema, false)
				}
			}
		}
	}
}
