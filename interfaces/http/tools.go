package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/workspace"
)

// route registers the /v1 tool routes: each body is the tool's argument
// object and each answer its result.
func (h *handlers) routeTools(r chi.Router) {
	r.Post(ToolRoutes[interfaces.ToolDiscover], postJSON(h, interfaces.ToolDiscover, h.svc.Discover))
	r.Post(ToolRoutes[interfaces.ToolInspect], postJSON(h, interfaces.ToolInspect, h.svc.Inspect))
	r.Post(ToolRoutes[interfaces.ToolAddSources], withGrant(interfaces.ToolGrant(interfaces.ToolAddSources), postJSON(h, interfaces.ToolAddSources, h.svc.AddSources)))
	r.Post(ToolRoutes[interfaces.ToolManageJob], postJSON(h, interfaces.ToolManageJob, h.svc.ManageJob))
	r.Post(ToolRoutes[interfaces.ToolSearch], h.search)
	r.Get("/v1/jobs/{id}", h.getJob)
	r.Get("/v1/evidence/{id}", h.evidence)
	r.Get("/v1/assets/{id}", h.asset)
}

// withGrant refuses a caller below g before next reads the body, for a
// route that needs g whatever the body says: a caller without it learns
// nothing from a well- or ill-formed body (DESIGN §8: scope before body).
// The Service checks the grant; this only puts its refusal first.
func withGrant(g workspace.Grant, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := requireGrant(r, g); err != nil {
			writeError(w, err)
			return
		}
		next(w, r)
	}
}

// postJSON adapts a Service method: check the body against the tool's
// input schema (decodeBody), decode it strictly, call, answer.
func postJSON[In, Out any](h *handlers, tool string, fn func(ctx context.Context, in In) (Out, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var in In
		if err := h.decodeBody(r, tool, &in); err != nil {
			h.fail(w, r, err)
			return
		}
		out, err := fn(r.Context(), in)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, out)
	}
}

// search answers with the structured bytes the Service made, as they
// are: the budget counted exactly them, and with a render they hold the
// rendered text in "rendered".
func (h *handlers) search(w http.ResponseWriter, r *http.Request) {
	var args interfaces.SearchArgs
	if err := h.decodeBody(r, interfaces.ToolSearch, &args); err != nil {
		h.fail(w, r, err)
		return
	}
	out, err := h.svc.Search(r.Context(), args)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if !json.Valid(out.Structured) {
		h.fail(w, r, workspace.Wrap(workspace.CodeInternal, fmt.Errorf("search returned %d structured bytes that are not JSON", len(out.Structured)), "internal error"))
		return
	}
	writeRaw(w, http.StatusOK, out.Structured)
}

func (h *handlers) getJob(w http.ResponseWriter, r *http.Request) {
	out, err := h.svc.GetJob(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (h *handlers) evidence(w http.ResponseWriter, r *http.Request) {
	out, err := h.svc.Evidence(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (h *handlers) asset(w http.ResponseWriter, r *http.Request) {
	a, err := h.svc.Asset(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	mime := a.MIME
	if mime == "" {
		mime = "application/octet-stream"
	}
	w.Header().Set("Content-Type", mime)
	w.Header().Set("Content-Length", strconv.Itoa(len(a.Bytes)))
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; sandbox")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(a.Bytes)
}
