package interfaces

import "github.com/tychora/tychora/workspace"

// toolGrants is the least grant that may call each tool (DESIGN §8).
var toolGrants = map[string]workspace.Grant{
	ToolDiscover:   workspace.GrantRead,
	ToolSearch:     workspace.GrantRead,
	ToolInspect:    workspace.GrantRead,
	ToolAddSources: workspace.GrantWrite,
	// list and get are reads; the Service asks write of cancel and retry.
	ToolManageJob: workspace.GrantRead,
}

// ToolGrant is the least grant that may call tool. The Service checks it,
// and it alone (docs/architecture.md, "Grants"); an adapter refuses a
// caller below it before reading the arguments, since a caller without
// it must learn nothing from them (DESIGN §8: scope before body). An
// unknown tool needs manage.
func ToolGrant(tool string) workspace.Grant {
	if g, ok := toolGrants[tool]; ok {
		return g
	}
	return workspace.GrantManage
}
