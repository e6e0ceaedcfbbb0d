package site

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3gen"

	"github.com/dbmark/dbmark/internal/buildinfo"
	"github.com/dbmark/dbmark/internal/site/sitestore"
)

// OpenAPI builds the API's OpenAPI 3 document. The schemas are generated
// from the Go types the handlers decode and encode, so they cannot drift
// from them; the contract test checks every handler's real requests and
// answers against the document.
func OpenAPI() (*openapi3.T, error) {
	schema := func(v any) (*openapi3.SchemaRef, error) {
		return openapi3gen.NewSchemaRefForValue(v, nil, openapi3gen.SchemaCustomizer(requireFields))
	}
	var err error
	ref := func(v any) *openapi3.SchemaRef {
		if err != nil {
			return nil
		}
		var r *openapi3.SchemaRef
		r, err = schema(v)
		return r
	}
	subm := ref(&Submission{})
	answer := ref(&SubmitAnswer{})
	list := ref(&ResultList{})
	detail := ref(&ResultDetail{})
	cmp := ref(&Comparison{})
	apiErr := ref(&APIError{})
	mod := ref(&ModerationAnswer{})
	if err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	errResp := func(desc string) *openapi3.Response {
		return openapi3.NewResponse().WithDescription(desc).WithJSONSchemaRef(apiErr)
	}
	jsonResp := func(desc string, s *openapi3.SchemaRef) *openapi3.Response {
		return openapi3.NewResponse().WithDescription(desc).WithJSONSchemaRef(s)
	}
	op := func(id, summary string) *openapi3.Operation {
		o := openapi3.NewOperation()
		o.OperationID, o.Summary = id, summary
		return o
	}
	idParam := openapi3.NewPathParameter("id").WithSchema(openapi3.NewStringSchema()).WithDescription("the result's id, as in its permalink /r/{id}")

	submit := op("submit", "Submit a redacted result or sweep (gzip accepted)")
	submit.RequestBody = &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().WithRequired(true).WithJSONSchemaRef(subm)}
	submit.AddParameter(openapi3.NewHeaderParameter("Content-Encoding").WithSchema(openapi3.NewStringSchema().WithEnum("gzip", "identity")))
	submit.AddResponse(http.StatusCreated, jsonResp("stored; url is its permalink", answer))
	submit.AddResponse(http.StatusOK, jsonResp("submitted before: the existing permalink", answer))
	submit.AddResponse(http.StatusBadRequest, errResp("refused: field names the field at fault"))
	submit.AddResponse(http.StatusRequestEntityTooLarge, errResp("larger than the cap after decompression"))
	submit.AddResponse(http.StatusUnsupportedMediaType, errResp("not JSON, or an encoding other than gzip"))
	tooMany := errResp("rate limit: wait Retry-After seconds")
	tooMany.Headers = openapi3.Headers{"Retry-After": &openapi3.HeaderRef{Value: &openapi3.Header{Parameter: openapi3.Parameter{
		Schema: openapi3.NewIntegerSchema().NewRef()}}}}
	submit.AddResponse(http.StatusTooManyRequests, tooMany)
	busy := errResp("the site is busy: wait Retry-After seconds")
	busy.Headers = tooMany.Headers
	submit.AddResponse(http.StatusServiceUnavailable, busy)

	lst := op("list", "List results, newest first or by headline, with filters and a cursor")
	for _, f := range sitestore.Facets {
		lst.AddParameter(openapi3.NewQueryParameter(f.Key).WithSchema(openapi3.NewStringSchema()).WithDescription("only results whose " + f.Label + " is this"))
	}
	lst.AddParameter(openapi3.NewQueryParameter("q").WithSchema(openapi3.NewStringSchema()).WithDescription("words each found in the result's facets"))
	lst.AddParameter(openapi3.NewQueryParameter("sort").WithSchema(openapi3.NewStringSchema().WithEnum(sitestore.SortNew, sitestore.SortHeadline, sitestore.SortLow)))
	lst.AddParameter(openapi3.NewQueryParameter("cursor").WithSchema(openapi3.NewStringSchema()).WithDescription("next_cursor of the previous page"))
	lst.AddParameter(openapi3.NewQueryParameter("limit").WithSchema(openapi3.NewIntegerSchema().WithMin(1).WithMax(500)))
	lst.AddParameter(openapi3.NewQueryParameter("facets").WithSchema(openapi3.NewBoolSchema()).WithDescription("also count results per filter value"))
	lst.AddResponse(http.StatusOK, jsonResp("a page of results", list))
	lst.AddResponse(http.StatusBadRequest, errResp("a bad filter, sort or cursor"))
	lst.AddResponse(http.StatusServiceUnavailable, busy)

	get := op("get", "One result with its submission")
	get.AddParameter(idParam)
	get.AddResponse(http.StatusOK, jsonResp("the result", detail))
	get.AddResponse(http.StatusNotFound, errResp("no such result (or hidden)"))
	get.AddResponse(http.StatusServiceUnavailable, busy)

	compare := op("compare", "Several results side by side, against the first")
	compare.AddParameter(openapi3.NewQueryParameter("ids").WithRequired(true).WithSchema(openapi3.NewStringSchema()).WithDescription("ids separated by commas"))
	compare.AddResponse(http.StatusOK, jsonResp("the comparison", cmp))
	compare.AddResponse(http.StatusBadRequest, errResp("fewer than two ids, or too many"))
	compare.AddResponse(http.StatusNotFound, errResp("an id names no result"))
	compare.AddResponse(http.StatusServiceUnavailable, busy)

	spec := op("openapi", "This document")
	spec.AddResponse(http.StatusOK, openapi3.NewResponse().WithDescription("OpenAPI 3 document").WithJSONSchema(openapi3.NewObjectSchema()))

	moderation := func(id, summary string) *openapi3.Operation {
		o := op(id, summary)
		o.AddParameter(idParam)
		o.Security = &openapi3.SecurityRequirements{{"admin": []string{}}}
		o.AddResponse(http.StatusOK, jsonResp("done", mod))
		o.AddResponse(http.StatusUnauthorized, errResp("no or wrong admin token"))
		o.AddResponse(http.StatusNotFound, errResp("no such result"))
		return o
	}
	bi := buildinfo.Get()
	doc := &openapi3.T{
		OpenAPI: "3.0.3",
		Info: &openapi3.Info{Title: "dbmark results site API", Version: bi.Version,
			Description: "Submit, list, fetch and compare benchmark results published with dbmark submit."},
		Components: &openapi3.Components{SecuritySchemes: openapi3.SecuritySchemes{
			"admin": &openapi3.SecuritySchemeRef{Value: openapi3.NewJWTSecurityScheme().WithBearerFormat("token")}}},
		Paths: openapi3.NewPaths(
			openapi3.WithPath("/api/v1/results", &openapi3.PathItem{Post: submit, Get: lst}),
			openapi3.WithPath("/api/v1/results/{id}", &openapi3.PathItem{Get: get}),
			openapi3.WithPath("/api/v1/compare", &openapi3.PathItem{Get: compare}),
			openapi3.WithPath("/api/v1/openapi.json", &openapi3.PathItem{Get: spec}),
			openapi3.WithPath("/api/v1/admin/results/{id}/hide", &openapi3.PathItem{Post: moderation("hide", "Hide a result from lists, leaderboards and the feed")}),
			openapi3.WithPath("/api/v1/admin/results/{id}/unhide", &openapi3.PathItem{Post: moderation("unhide", "Show a hidden result again")}),
			openapi3.WithPath("/api/v1/admin/results/{id}", &openapi3.PathItem{Delete: moderation("delete", "Delete a result")}),
		),
	}
	return doc, nil
}

var openAPIJSON = sync.OnceValues(func() ([]byte, error) {
	doc, err := OpenAPI()
	if err != nil {
		return nil, err
	}
	return json.Marshal(doc)
})

func (s *Server) apiOpenAPI(w http.ResponseWriter, r *http.Request) {
	b, err := openAPIJSON()
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

// requireFields marks as required every field Go always encodes (those
// without omitempty or omitzero), so an answer missing one breaks the
// contract.
func requireFields(_ string, t reflect.Type, _ reflect.StructTag, schema *openapi3.Schema) error {
	if t.Kind() != reflect.Struct || t == reflect.TypeFor[time.Time]() {
		return nil
	}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for f := range t.Fields() {
			if f.Anonymous {
				continue // an embedded pointer may be nil: its fields may be absent
			}
			tag, ok := f.Tag.Lookup("json")
			if !ok || !f.IsExported() {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			if name == "-" || strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero") {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if _, ok := schema.Properties[name]; ok && !slices.Contains(schema.Required, name) {
				schema.Required = append(schema.Required, name)
			}
		}
	}
	walk(t)
	return nil
}
