package mcpapi

import "github.com/tychora/tychora/interfaces"

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
