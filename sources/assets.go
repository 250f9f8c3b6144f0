package sources

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/tychora/tychora/workspace"
)

// MaxAssetBytes is the largest payload stored as an asset (DESIGN §2).
const MaxAssetBytes = 16 << 20

// ErrAssetNotFound means no asset has the requested id.
var ErrAssetNotFound = errors.New("asset not found")

// sniffedImages are the MIME types, as http.DetectContentType sniffs them
// from the first bytes, of content that becomes an asset whatever its name.
var sniffedImages = map[string]bool{
	"image/png":    true,
	"image/jpeg":   true,
	"image/gif":    true,
	"image/webp":   true,
	"image/bmp":    true,
	"image/x-icon": true,
}

// imageByExt gives the MIME type of the image extensions of the kind
// registry (kind "image"): such a file is an asset even when its content
// does not sniff as an image (SVG is XML text; AVIF, HEIC and TIFF are not
// sniffed).
var imageByExt = map[string]string{
	".avif": "image/avif",
	".bmp":  "image/bmp",
	".gif":  "image/gif",
	".heic": "image/heic",
	".ico":  "image/x-icon",
	".jpeg": "image/jpeg",
	".jpg":  "image/jpeg",
	".png":  "image/png",
	".svg":  "image/svg+xml",
	".tif":  "image/tiff",
	".tiff": "image/tiff",
	".webp": "image/webp",
}

// imageMIME returns the MIME type of an image that becomes an asset,
// judged from the content's first bytes, else from the extension, or "".
func imageMIME(rel string, head []byte) string {
	if mt := http.DetectContentType(head); sniffedImages[mt] {
		return mt
	}
	return imageByExt[strings.ToLower(path.Ext(rel))]
}

// Assets is the content-addressed store under WORKSPACE/assets: a payload
// lives at assets/ab/abcdef… where the name is the hex SHA-256 of its bytes,
// which is also its id. Writes are atomic (temporary file and rename) and
// idempotent, so concurrent writers of the same payload are harmless.
type Assets struct {
	Dir string
}

// NewAssets returns the store rooted at dir (WORKSPACE/assets).
func NewAssets(dir string) *Assets { return &Assets{Dir: dir} }

// ValidAssetID reports whether id looks like an asset id (64 lowercase hex).
func ValidAssetID(id string) bool {
	if len(id) != 64 {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil && id == toLowerHex(id)
}

func toLowerHex(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'F' {
			b[i] = c + ('a' - 'A')
		}
	}
	return string(b)
}

// Path returns where the asset with id is stored; id must be valid.
func (a *Assets) Path(id string) string {
	return filepath.Join(a.Dir, id[:2], id)
}

// Put stores data and returns its id (hex SHA-256). Storing a payload that
// is already there is a no-op.
func (a *Assets) Put(data []byte) (string, error) {
	if len(data) > MaxAssetBytes {
		return "", fmt.Errorf("asset is %d bytes, over the %d limit", len(data), MaxAssetBytes)
	}
	sum := sha256.Sum256(data)
	id := hex.EncodeToString(sum[:])
	return id, a.put(id, data)
}

func (a *Assets) put(id string, data []byte) error {
	dst := a.Path(id)
	if fi, err := os.Stat(dst); err == nil && fi.Size() == int64(len(data)) {
		return nil
	}
	dir := filepath.Dir(dst)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("store asset: %w", err)
	}
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("store asset: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after the rename
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("store asset: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("store asset: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("store asset: %w", err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		return fmt.Errorf("store asset: %w", err)
	}
	return nil
}

// Get returns the bytes of the asset with id, checking that they still hash
// to it. An unknown or malformed id is ErrAssetNotFound.
func (a *Assets) Get(id string) ([]byte, error) {
	if !ValidAssetID(id) {
		return nil, ErrAssetNotFound
	}
	b, err := os.ReadFile(a.Path(id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrAssetNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("read asset: %w", err)
	}
	sum := sha256.Sum256(b)
	if !bytes.Equal(sum[:], mustHex(id)) {
		return nil, fmt.Errorf("read asset %s: content does not match its hash", id)
	}
	return b, nil
}

func mustHex(s string) []byte {
	b, _ := hex.DecodeString(s)
	return b
}

// SweepAssets removes what a sync that never committed left in the store:
// temporary files of writes cut short (".tmp-*"), and payloads no
// revision recorded (an assets row), written by a sync that was cancelled,
// failed or killed before its apply committed. It must run while no sync
// does (the owner runs it as it opens, before its job queue starts). It
// returns how many files it removed; a file it cannot remove is skipped.
func SweepAssets(ctx context.Context, db *workspace.DB, a *Assets) (int, error) {
	known := map[string]bool{}
	rows, err := db.W.QueryContext(ctx, `SELECT id FROM assets`)
	if err != nil {
		return 0, fmt.Errorf("sweep assets: %w", err)
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, fmt.Errorf("sweep assets: %w", err)
		}
		known[id] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("sweep assets: %w", err)
	}
	shards, err := os.ReadDir(a.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("sweep assets: %w", err)
	}
	removed := 0
	for _, sh := range shards {
		if !sh.IsDir() || len(sh.Name()) != 2 {
			continue
		}
		dir := filepath.Join(a.Dir, sh.Name())
		files, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, f := range files {
			name := f.Name()
			orphan := strings.HasPrefix(name, ".tmp-") ||
				(ValidAssetID(name) && strings.HasPrefix(name, sh.Name()) && !known[name])
			if orphan && f.Type().IsRegular() && os.Remove(filepath.Join(dir, name)) == nil {
				removed++
			}
		}
	}
	return removed, nil
}
