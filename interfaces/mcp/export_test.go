package mcpapi

import (
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// ServerMethods returns the method table screen checks HTTP bodies
// against: for each method, whether it is a notification and whether it
// needs params.
func ServerMethods() map[string][2]bool {
	out := map[string][2]bool{}
	for m, r := range serverMethods {
		out[m] = [2]bool{r.notification, r.params}
	}
	return out
}

// SDKSessionHandler returns the SDK's session handler of h as h mounts
// it, but without the checks h runs before it, to test what the SDK
// itself answers.
func (h *HTTPHandler) SDKSessionHandler() http.Handler {
	return auth.RequireBearerToken(principalToken, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h.stateful)
}
