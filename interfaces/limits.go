package interfaces

import (
	"github.com/tychora/tychora/render"
	"github.com/tychora/tychora/sources"
	"github.com/tychora/tychora/workspace"
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

// CheckResultSize is nil when a serialized tool result of n bytes may be
// sent, and otherwise the one OUTPUT_BUDGET_EXCEEDED error of a result
// over MaxResultBytes.
func CheckResultSize(n int) error { return render.CheckResultSize(n) }

// ErrAssetTooLarge is the one error of an asset over MaxAssetBytes, on
// every edge.
var ErrAssetTooLarge = workspace.Errorf(workspace.CodeOutputBudgetExceeded,
	"the asset is over the %d-byte (16 MiB) limit of one asset", MaxAssetBytes)
