package runtime

import (
	"errors"
	"fmt"

	"github.com/tychora/tychora/workspace"
)

var errExists = errors.New("workspace exists")

// InitOptions are the choices of tychora init.
type InitOptions struct {
	IngestRoots []string // empty: the directory that holds the workspace
	Collections []string // empty: ["default"]
}

// Init creates the workspace at dir and writes tychora.json with every
// setting and its default. An existing workspace is CONFLICT.
func Init(dir string, o InitOptions) (workspace.Settings, error) {
	l := workspace.NewLayout(dir)
	s := workspace.Settings{IngestRoots: o.IngestRoots, Collections: o.Collections}
	s.Fill(dir)
	err := initWorkspace(l, s)
	if errors.Is(err, errExists) {
		return workspace.Settings{}, workspace.Errorf(workspace.CodeConflict, "a workspace already exists at %s (edit its tychora.json to change settings)", dir)
	}
	if err != nil {
		return workspace.Settings{}, workspace.StorageError("create the workspace", dir, err)
	}
	return s, nil
}

func initWorkspace(l workspace.Layout, s workspace.Settings) error {
	if l.Exists() {
		return errExists
	}
	if err := s.Validate(l.Dir); err != nil {
		return err
	}
	if err := l.EnsureDirs(); err != nil {
		return fmt.Errorf("create workspace: %w", err)
	}
	if err := workspace.SaveSettings(l, s); err != nil {
		return fmt.Errorf("create workspace: %w", err)
	}
	return nil
}
