package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/workspace"
)

// Discover calls POST /v1/discover. Each item is kept as the bytes the
// owner sent, so that encoding the result again gives the owner's body
// byte for byte.
func (c *Client) Discover(ctx context.Context, args interfaces.DiscoverArgs) (interfaces.DiscoverResult, error) {
	var out interfaces.DiscoverResult
	err := c.do(ctx, http.MethodPost, ToolRoutes[interfaces.ToolDiscover], args, &out)
	return out, err
}

// Search calls POST /v1/search. The structured bytes are the body as the
// owner sent it, "rendered" included: the bytes its budget counted.
func (c *Client) Search(ctx context.Context, args interfaces.SearchArgs) (interfaces.SearchOutput, error) {
	var raw json.RawMessage
	if err := c.do(ctx, http.MethodPost, ToolRoutes[interfaces.ToolSearch], args, &raw); err != nil {
		return interfaces.SearchOutput{}, err
	}
	var res query.QueryResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return interfaces.SearchOutput{}, workspace.Wrap(workspace.CodeUnavailable, err, "the tychora owner sent an unreadable answer")
	}
	return interfaces.SearchOutput{Result: res, Structured: raw, Rendered: res.Rendered}, nil
}

// Inspect calls POST /v1/inspect. The result is kept as the bytes the
// owner sent, as in Discover.
func (c *Client) Inspect(ctx context.Context, args interfaces.InspectArgs) (interfaces.InspectResult, error) {
	var out interfaces.InspectResult
	err := c.do(ctx, http.MethodPost, ToolRoutes[interfaces.ToolInspect], args, &out)
	return out, err
}

// AddSources calls POST /v1/add_sources.
func (c *Client) AddSources(ctx context.Context, req interfaces.AddSourcesRequest) (interfaces.JobResult, error) {
	var out interfaces.JobResult
	err := c.do(ctx, http.MethodPost, ToolRoutes[interfaces.ToolAddSources], req, &out)
	return out, err
}

// ManageJob calls POST /v1/manage_job.
func (c *Client) ManageJob(ctx context.Context, req interfaces.ManageJobRequest) (interfaces.ManageJobResult, error) {
	var out interfaces.ManageJobResult
	err := c.do(ctx, http.MethodPost, ToolRoutes[interfaces.ToolManageJob], req, &out)
	return out, err
}

// GetJob calls GET /v1/jobs/{id}.
func (c *Client) GetJob(ctx context.Context, id string) (interfaces.JobResult, error) {
	var out interfaces.JobResult
	if err := checkID(id); err != nil {
		return out, err
	}
	err := c.do(ctx, http.MethodGet, "/v1/jobs/"+url.PathEscape(id), nil, &out)
	return out, err
}

// Evidence calls GET /v1/evidence/{id}.
func (c *Client) Evidence(ctx context.Context, id string) (interfaces.EvidenceResult, error) {
	var out interfaces.EvidenceResult
	if err := checkID(id); err != nil {
		return out, err
	}
	err := c.do(ctx, http.MethodGet, "/v1/evidence/"+url.PathEscape(id), nil, &out)
	return out, err
}

// Asset calls GET /v1/assets/{id} and returns the bytes with their type.
func (c *Client) Asset(ctx context.Context, id string) (interfaces.Asset, error) {
	if err := checkID(id); err != nil {
		return interfaces.Asset{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base.JoinPath("/v1/assets/"+url.PathEscape(id)).String(), nil)
	if err != nil {
		return interfaces.Asset{}, workspace.Wrap(workspace.CodeInternal, err, "cannot build request")
	}
	c.authorize(req)
	resp, err := c.hc.Do(req)
	if err != nil {
		return interfaces.Asset{}, unreachable(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return interfaces.Asset{}, decodeErrorResponse(resp)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, interfaces.MaxAssetBytes+1))
	if err != nil {
		return interfaces.Asset{}, workspace.Wrap(workspace.CodeUnavailable, err, "the tychora owner sent an unreadable answer")
	}
	if len(b) > interfaces.MaxAssetBytes {
		return interfaces.Asset{}, interfaces.ErrAssetTooLarge
	}
	return interfaces.Asset{ID: id, MIME: resp.Header.Get("Content-Type"), Bytes: b}, nil
}

// checkID refuses an id no record can have (as NOT_FOUND, like the owner
// does) before it is put in a URL path.
func checkID(id string) error {
	if id == "" || len(id) > 256 || strings.ContainsAny(id, "/\\\x00") {
		return workspace.Errorf(workspace.CodeNotFound, "no record with that id")
	}
	return nil
}

func (c *Client) authorize(req *http.Request) {
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.Scope != "" {
		req.Header.Set(ScopeHeader, c.Scope)
	}
	if c.Instance != "" {
		req.Header.Set(workspace.ClientHeader, c.Instance)
	}
}
