package site

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
)

// apiOp is one operation of the OpenAPI document as the API page shows it.
type apiOp struct {
	Method, Path, ID, Summary string
	Admin                     bool
	Params                    []apiField
	Body                      *apiSchema
	Responses                 []apiResponse
}

type apiResponse struct {
	Status, Description string
	Schema              *apiSchema
}

// apiSchema is a schema's fields, nested to a few levels.
type apiSchema struct {
	Type   string
	Fields []apiField
	// Deeper says fields below were left out (see the JSON document).
	Deeper bool
}

type apiField struct {
	Name, In, Type, Description string
	Required                    bool
	Schema                      *apiSchema // an object's or an array of objects' fields
}

// apiDepth is how deep the page shows a schema's fields: a submission's
// result documents go much deeper, and the JSON document has them all.
const apiDepth = 3

func typeOf(s *openapi3.Schema) string {
	if s == nil {
		return ""
	}
	t := strings.Join(s.Type.Slice(), " or ")
	switch {
	case t == "array" && s.Items != nil:
		t = "array of " + typeOf(s.Items.Value)
	case t == "object" && len(s.Properties) == 0 && s.AdditionalProperties.Schema != nil:
		t = "map of " + typeOf(s.AdditionalProperties.Schema.Value)
	case t == "" && len(s.Properties) > 0:
		t = "object"
	}
	if s.Format != "" {
		t += " (" + s.Format + ")"
	}
	if len(s.Enum) > 0 {
		var vs []string
		for _, v := range s.Enum {
			vs = append(vs, fmt.Sprint(v))
		}
		t += ": " + strings.Join(vs, ", ")
	}
	return t
}

// schemaOf lays out s's fields, depth levels deep.
func schemaOf(ref *openapi3.SchemaRef, depth int) *apiSchema {
	if ref == nil || ref.Value == nil {
		return nil
	}
	s := ref.Value
	if s.Items != nil && s.Type.Is("array") {
		s = s.Items.Value
	}
	if s.AdditionalProperties.Schema != nil && len(s.Properties) == 0 {
		s = s.AdditionalProperties.Schema.Value
	}
	if s == nil || len(s.Properties) == 0 {
		return nil
	}
	out := &apiSchema{Type: typeOf(ref.Value)}
	if depth == 0 {
		out.Deeper = true
		return out
	}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range s.Properties {
			if !yield(k) {
				return
			}
		}
	}) {
		p := s.Properties[name]
		f := apiField{Name: name, Type: typeOf(p.Value), Required: slices.Contains(s.Required, name), Schema: schemaOf(p, depth-1)}
		if p.Value != nil {
			f.Description = p.Value.Description
		}
		out.Fields = append(out.Fields, f)
	}
	return out
}

func jsonSchema(content openapi3.Content) *openapi3.SchemaRef {
	if mt := content.Get("application/json"); mt != nil {
		return mt.Schema
	}
	return nil
}

// apiOps lays out the document's operations, by path, in the order of
// methods a reader expects.
func apiOps(doc *openapi3.T) []apiOp {
	var ops []apiOp
	for _, p := range slices.Sorted(func(yield func(string) bool) {
		for k := range doc.Paths.Map() {
			if !yield(k) {
				return
			}
		}
	}) {
		item := doc.Paths.Value(p)
		for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
			o := item.GetOperation(method)
			if o == nil {
				continue
			}
			op := apiOp{Method: method, Path: p, ID: o.OperationID, Summary: o.Summary, Admin: o.Security != nil && len(*o.Security) > 0}
			for _, pr := range o.Parameters {
				v := pr.Value
				f := apiField{Name: v.Name, In: v.In, Required: v.Required, Description: v.Description}
				if v.Schema != nil {
					f.Type = typeOf(v.Schema.Value)
				}
				op.Params = append(op.Params, f)
			}
			if o.RequestBody != nil && o.RequestBody.Value != nil {
				op.Body = schemaOf(jsonSchema(o.RequestBody.Value.Content), apiDepth)
			}
			for _, code := range slices.Sorted(func(yield func(string) bool) {
				for k := range o.Responses.Map() {
					if !yield(k) {
						return
					}
				}
			}) {
				r := o.Responses.Value(code).Value
				resp := apiResponse{Status: code}
				if r.Description != nil {
					resp.Description = *r.Description
				}
				resp.Schema = schemaOf(jsonSchema(r.Content), apiDepth)
				op.Responses = append(op.Responses, resp)
			}
			ops = append(ops, op)
		}
	}
	return ops
}

// apiPage is what the API page shows of the document.
type apiPage struct {
	page
	DocTitle, Version, Description string
	Ops                            []apiOp
}

// apiPageHTML is the API page, laid out once: it depends on nothing but
// the document, so it is served as a static file is (no request slot).
var apiPageHTML = sync.OnceValues(func() ([]byte, error) {
	doc, err := OpenAPI()
	if err != nil {
		return nil, err
	}
	p, err := newPages(nil)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	err = p.t.ExecuteTemplate(&b, "api", apiPage{page: page{Title: "API"}, DocTitle: doc.Info.Title, Version: doc.Info.Version,
		Description: doc.Info.Description, Ops: apiOps(doc)})
	return b.Bytes(), err
})

// pageAPI is the API's reference: the OpenAPI document laid out as HTML
// on the server, so it needs no script and nothing from another origin.
func (s *Server) pageAPI(w http.ResponseWriter, r *http.Request) {
	b, err := apiPageHTML()
	if err != nil {
		s.pageFailed(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	http.ServeContent(w, r, "", s.pages.started, bytes.NewReader(b))
}
