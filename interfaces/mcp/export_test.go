package mcpapi

import (
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/tychora/tychora/interfaces"
)

// DecodeArgs runs the argument decoder of tool on raw, for the fuzz
// targets of the external tests.
func DecodeArgs(tool string, raw []byte) error {
	var err error
	switch tool {
	case ToolDiscover:
		_, err = decodeArgs[interfaces.DiscoverArgs](tool, raw)
	case ToolSearch:
		_, err = decodeArgs[interfaces.SearchArgs](tool, raw)
	case ToolInspect:
		_, err = decodeArgs[interfaces.InspectArgs](tool, raw)
	case ToolAddSources:
		_, err = decodeArgs[interfaces.AddSourcesRequest](tool, raw)
	case ToolManageJob:
		_, err = decodeArgs[interfaces.ManageJobRequest](tool, raw)
	default:
		_, err = decodeArgs[struct{}](tool, raw)
	}
	return err
}

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
