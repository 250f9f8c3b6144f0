package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/workspace"
)

// Client is the Service over HTTP, for sibling processes and tests. It
// sends its bearer token on every request and, when Scope is set, the
// X-Tychora-Scope header.
type Client struct {
	base  *url.URL
	token string
	// Scope, when not empty, narrows every request (X-Tychora-Scope).
	Scope string
	// Instance, when not empty, names this client on every request
	// (X-Tychora-Client).
	Instance string
	hc       *http.Client
}

var _ interfaces.Service = (*Client)(nil)

// NewClient returns a client for the owner at baseURL (http://127.0.0.1:PORT).
// A nil hc uses a client that never follows redirects and never uses a
// proxy.
func NewClient(baseURL, token string, hc *http.Client) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("owner url %q: want http://127.0.0.1:PORT", baseURL)
	}
	if hc == nil {
		hc = &http.Client{
			Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 16, IdleConnTimeout: 90 * time.Second},
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		}
	}
	return &Client{base: u, token: token, hc: hc}, nil
}

// BaseURL returns the owner's base URL.
func (c *Client) BaseURL() string { return c.base.String() }

// do sends a request and decodes a JSON answer into out (nil: discard).
// Error bodies become *workspace.Error with the server's code and message;
// a failure to reach the owner is UNAVAILABLE.
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return workspace.Wrap(workspace.CodeInvalidArgument, err, "cannot encode request")
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base.JoinPath(path).String(), body)
	if err != nil {
		return workspace.Wrap(workspace.CodeInternal, err, "cannot build request")
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	c.authorize(req)
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return unreachable(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return decodeErrorResponse(resp)
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return workspace.Wrap(workspace.CodeUnavailable, err, "the tychora owner sent an unreadable answer")
	}
	return nil
}

func decodeErrorResponse(resp *http.Response) error {
	var eb interfaces.ErrorBody
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err := json.Unmarshal(b, &eb); err != nil || !eb.Error.Code.Valid() {
		return workspace.Errorf(workspace.CodeUnavailable, "the tychora owner answered HTTP %d", resp.StatusCode)
	}
	return &workspace.Error{Code: eb.Error.Code, Message: eb.Error.Message}
}

// Health calls GET /v1/health.
func (c *Client) Health(ctx context.Context) (interfaces.HealthResult, error) {
	var out interfaces.HealthResult
	err := c.do(ctx, http.MethodGet, "/v1/health", nil, &out)
	return out, err
}

// Status calls GET /v1/status.
func (c *Client) Status(ctx context.Context) (interfaces.StatusResult, error) {
	var out interfaces.StatusResult
	err := c.do(ctx, http.MethodGet, "/v1/status", nil, &out)
	return out, err
}

// ListTokens calls GET /v1/tokens.
func (c *Client) ListTokens(ctx context.Context) (interfaces.TokenList, error) {
	var out interfaces.TokenList
	err := c.do(ctx, http.MethodGet, "/v1/tokens", nil, &out)
	return out, err
}

// CreateToken calls POST /v1/tokens.
func (c *Client) CreateToken(ctx context.Context, req interfaces.CreateTokenRequest) (interfaces.CreatedToken, error) {
	var out interfaces.CreatedToken
	err := c.do(ctx, http.MethodPost, "/v1/tokens", req, &out)
	return out, err
}

// RevokeToken calls DELETE /v1/tokens/{id}.
func (c *Client) RevokeToken(ctx context.Context, id string) error {
	if id == "" {
		return workspace.Errorf(workspace.CodeInvalidArgument, "token id is empty")
	}
	return c.do(ctx, http.MethodDelete, "/v1/tokens/"+url.PathEscape(id), nil, nil)
}

// RemoveSource calls DELETE /v1/sources/{id}.
func (c *Client) RemoveSource(ctx context.Context, id string) (interfaces.RemovedSource, error) {
	var out interfaces.RemovedSource
	if id == "" {
		return out, workspace.Errorf(workspace.CodeInvalidArgument, "source id is empty")
	}
	err := c.do(ctx, http.MethodDelete, "/v1/sources/"+url.PathEscape(id), nil, &out)
	return out, err
}

// ErrUnreachable is the cause of an UNAVAILABLE error when no answer came
// back at all (connection refused or reset, the owner gone).
var ErrUnreachable = errors.New("the tychora owner did not answer")

func unreachable(err error) error {
	return workspace.Wrap(workspace.CodeUnavailable, fmt.Errorf("%w: %w", ErrUnreachable, err), "the tychora owner did not answer")
}

// IsUnreachable reports whether err means the owner this client knew is
// gone: no answer at all, or its token refused (another owner now holds
// the port). A caller may look for the next owner and try again.
func IsUnreachable(err error) bool {
	return errors.Is(err, ErrUnreachable) || workspace.ErrorCode(err) == workspace.CodeUnauthenticated
}
