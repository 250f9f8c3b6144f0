package workspace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// KeptToken is a token secret kept in .runtime/mcp-tokens.json so that
// mcp-config --http can print the configuration it printed before. It is
// the one place a token's secret is stored in clear (docs/security.md).
type KeptToken struct {
	ID     string `json:"id"`
	Secret string `json:"secret"`
}

// maxKeptTokensBytes bounds what LoadKeptTokens reads.
const maxKeptTokensBytes = 64 << 10

type keptTokensFile struct {
	Version int                  `json:"version"`
	Tokens  map[string]KeptToken `json:"tokens"`
}

// LoadKeptTokens reads the kept secrets by token name. A missing file is an
// empty map; a file that is not what SaveKeptToken writes is an error, and
// the caller makes a new token rather than trust it.
func LoadKeptTokens(l Layout) (map[string]KeptToken, error) {
	f, err := os.Open(l.MCPTokens)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]KeptToken{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxKeptTokensBytes+1))
	if err != nil {
		return nil, err
	}
	return ParseKeptTokens(b)
}

// ParseKeptTokens decodes the content of .runtime/mcp-tokens.json.
func ParseKeptTokens(b []byte) (map[string]KeptToken, error) {
	if len(b) > maxKeptTokensBytes {
		return nil, fmt.Errorf("mcp-tokens.json is larger than %d bytes", maxKeptTokensBytes)
	}
	var kf keptTokensFile
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&kf); err != nil {
		return nil, fmt.Errorf("mcp-tokens.json: %w", err)
	}
	if dec.More() {
		return nil, errors.New("mcp-tokens.json: more than one JSON value")
	}
	if kf.Version != 1 {
		return nil, fmt.Errorf("mcp-tokens.json: unsupported version %d", kf.Version)
	}
	out := make(map[string]KeptToken, len(kf.Tokens))
	for name, t := range kf.Tokens {
		if !WellFormedSecret(t.Secret) || t.ID == "" {
			return nil, fmt.Errorf("mcp-tokens.json: token %q has no id or secret", Clip(name, 80))
		}
		out[name] = t
	}
	return out, nil
}

// SaveKeptToken records the secret of the token named name, replacing what
// was kept under that name. The file is written atomically with mode 0600
// inside the 0700 runtime directory.
func SaveKeptToken(l Layout, name string, t KeptToken) error {
	kept, err := LoadKeptTokens(l)
	if err != nil {
		kept = map[string]KeptToken{} // an unreadable file is replaced
	}
	kept[name] = t
	b, err := json.MarshalIndent(keptTokensFile{Version: 1, Tokens: kept}, "", "  ")
	if err != nil {
		return err
	}
	if err := l.EnsureDirs(); err != nil {
		return err
	}
	return WriteFileAtomic(l.MCPTokens, append(b, '\n'), 0o600)
}
