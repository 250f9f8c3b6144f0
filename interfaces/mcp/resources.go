package mcpapi

import (
	"cmp"
	"context"
	"encoding/json"
	"log/slog"
	"runtime/debug"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/sources"
	"github.com/tychora/tychora/workspace"
)

// The four resource templates (DESIGN §5). Each names a record by id; none
// ever reads a filesystem path.
const (
	schemaURIPrefix   = "tychora://schemas/"
	kindURIPrefix     = "tychora://kinds/"
	evidenceURIPrefix = "tychora://evidence/"
	assetURIPrefix    = "tychora://assets/"

	mimeSchema = "application/schema+json"
	mimeJSON   = "application/json"
)

// resourceSpec is one template and how to read an id under it.
type resourceSpec struct {
	template *mcp.ResourceTemplate
	prefix   string
	what     string
	read     func(ctx context.Context, id string) (*mcp.ResourceContents, error)
}

func (s *server) resourceSpecs() []resourceSpec {
	return []resourceSpec{
		{
			template: &mcp.ResourceTemplate{
				URITemplate: schemaURIPrefix + "{name}",
				Name:        "schema",
				Title:       "JSON Schema of a public type",
				Description: "The JSON Schema (draft 2020-12) of a public tychora type: a tool's arguments or result (DiscoverArgs, QueryResult, ...), or a part of one (QueryRequest, JobHandle, Evidence, ...). resources/list names them all.",
				MIMEType:    mimeSchema,
			},
			prefix: schemaURIPrefix,
			what:   "schema",
			read: func(_ context.Context, name string) (*mcp.ResourceContents, error) {
				d := schemaDocument(name)
				if d == nil {
					return nil, notFound("schema")
				}
				return jsonContents(mimeSchema, d)
			},
		},
		{
			template: &mcp.ResourceTemplate{
				URITemplate: kindURIPrefix + "{id}",
				Name:        "kind",
				Title:       "Evidence kind definition",
				Description: "A registered kind (markdown, code, html, text, data, image): the files it covers, its extractor, levels, channels and facets, whose values search filters match exactly.",
				MIMEType:    mimeJSON,
			},
			prefix: kindURIPrefix,
			what:   "kind",
			read: func(_ context.Context, id string) (*mcp.ResourceContents, error) {
				k, ok := sources.KindByID(id)
				if !ok {
					return nil, notFound("kind")
				}
				return jsonContents(mimeJSON, k)
			},
		},
		{
			template: &mcp.ResourceTemplate{
				URITemplate: evidenceURIPrefix + "{id}",
				Name:        "evidence",
				Title:       "Evidence record and its text",
				Description: `One piece of indexed evidence with its whole text: {"evidence":{"evidence_id","path","heading_path","span","hash","stale","text",...}}. The id is a search hit's evidence_id.`,
				MIMEType:    mimeJSON,
			},
			prefix: evidenceURIPrefix,
			what:   "evidence",
			read: func(ctx context.Context, id string) (*mcp.ResourceContents, error) {
				ev, err := s.svc.Evidence(ctx, id)
				if err != nil {
					return nil, err
				}
				return jsonContents(mimeJSON, ev)
			},
		},
		{
			template: &mcp.ResourceTemplate{
				URITemplate: assetURIPrefix + "{id}",
				Name:        "asset",
				Title:       "Registered payload",
				Description: "The bytes of a registered asset (an indexed image, say), at most 16 MiB, with their MIME type. Ids come from inspect source_selections.",
			},
			prefix: assetURIPrefix,
			what:   "asset",
			read: func(ctx context.Context, id string) (*mcp.ResourceContents, error) {
				a, err := s.svc.Asset(ctx, id)
				if err != nil {
					return nil, err
				}
				if len(a.Bytes) > interfaces.MaxAssetBytes {
					return nil, interfaces.ErrAssetTooLarge
				}
				blob := a.Bytes
				if blob == nil {
					blob = []byte{}
				}
				return &mcp.ResourceContents{MIMEType: cmp.Or(a.MIME, "application/octet-stream"), Blob: blob}, nil
			},
		},
	}
}

// addResources registers the four templates, and the schemas and kinds
// (a fixed set) as listed resources too, so that a client can browse them.
func (s *server) addResources(srv *mcp.Server) {
	for _, spec := range s.resourceSpecs() {
		h := s.resourceHandler(spec)
		srv.AddResourceTemplate(spec.template, h)
		switch spec.prefix {
		case schemaURIPrefix:
			for _, name := range interfaces.SchemaNames() {
				srv.AddResource(&mcp.Resource{URI: schemaURIPrefix + name, Name: name, Title: "JSON Schema: " + name, MIMEType: mimeSchema}, h)
			}
		case kindURIPrefix:
			for _, k := range sources.Kinds() {
				srv.AddResource(&mcp.Resource{URI: kindURIPrefix + k.ID, Name: "kind " + k.ID, Title: "Kind: " + k.ID, Description: k.Description, MIMEType: mimeJSON}, h)
			}
		}
	}
}

// resourceHandler adapts spec to the SDK. The caller needs the read grant;
// a malformed, unknown or out-of-scope id is resource-not-found.
func (s *server) resourceHandler(spec resourceSpec) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (res *mcp.ReadResourceResult, err error) {
		uri := ""
		if req.Params != nil {
			uri = req.Params.URI
		}
		defer func() {
			if r := recover(); r != nil {
				s.log.Error("mcp resource read panicked", workspace.LogResource, spec.what, workspace.LogPanic, r, workspace.LogStack, string(debug.Stack()))
				res, err = nil, resourceError(uri, workspace.Errorf(workspace.CodeInternal, "internal error"))
			}
		}()
		ctx, p, ok := s.callerContext(ctx, req)
		if !ok {
			return nil, resourceError(uri, workspace.Errorf(workspace.CodeUnauthenticated, "no caller identity"))
		}
		if err := p.Require(workspace.GrantRead); err != nil {
			return nil, resourceError(uri, err)
		}
		id, ok := resourceID(uri, spec.prefix)
		if !ok {
			return nil, resourceError(uri, notFound(spec.what))
		}
		c, err := spec.read(ctx, id)
		if err != nil {
			return nil, resourceError(uri, s.failure(ctx, slog.String(workspace.LogResource, spec.what), err))
		}
		c.URI = uri
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}}, nil
	}
}

// maxID bounds a resource id.
const maxID = 256

// resourceID returns the id of uri under prefix: one non-empty segment of
// letters, digits and "._:-". Anything else (a path, an escape, a query)
// names no resource.
func resourceID(uri, prefix string) (string, bool) {
	id, ok := strings.CutPrefix(uri, prefix)
	if !ok || id == "" || len(id) > maxID {
		return "", false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.' || c == ':') {
			return "", false
		}
	}
	if id == "." || id == ".." {
		return "", false
	}
	return id, true
}

// jsonContents is v as a JSON text resource.
func jsonContents(mime string, v any) (*mcp.ResourceContents, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, workspace.Wrap(workspace.CodeInternal, err, "internal error")
	}
	return &mcp.ResourceContents{MIMEType: mime, Text: string(b)}, nil
}

// schemaDocument returns the schema called name as a standalone document
// with $schema and $id set, or nil when there is none.
func schemaDocument(name string) *jsonschema.Schema {
	d := interfaces.Schema(name)
	if d == nil {
		return nil
	}
	d.Schema = interfaces.SchemaDialect
	d.ID = schemaURIPrefix + name
	if d.Title == "" {
		d.Title = name
	}
	return d
}
