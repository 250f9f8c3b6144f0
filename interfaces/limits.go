package interfaces

import (
	"github.com/tychora/tychora/render"
	"github.com/tychora/tychora/sources"
)

// The limits of the contract, one name each for both adapters. Each value
// lives where it is enforced, below interfaces, and is named here.
const (
	// MaxResultBytes caps a serialized MCP CallToolResult (DESIGN §6);
	// a larger result is OUTPUT_BUDGET_EXCEEDED, in render.CheckResultSize's
	// words.
	MaxResultBytes = render.MaxResultBytes
	// MaxAssetBytes caps an asset (DESIGN §5): sync stores none larger,
	// and neither tychora://assets/{id} nor Client.Asset passes one.
	MaxAssetBytes = sources.MaxAssetBytes
)
