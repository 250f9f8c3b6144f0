package servicetest

import (
	"errors"

	"github.com/tychora/tychora/workspace"
)

func asError(err error, e **workspace.Error) bool { return errors.As(err, e) }
