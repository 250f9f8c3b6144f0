package sources

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Processing one file of a sync: reading it, detecting what it is,
// extracting its evidence or recording why it is skipped.

// File statuses of a processed file.
const (
	statusIndexed    = "indexed"    // text extracted into evidence
	statusAsset      = "asset"      // an image stored as an asset
	statusSkipped    = "skipped"    // kept in files with a skip reason
	statusTouched    = "touched"    // modified time changed, content identical
	statusUnreadable = "unreadable" // could not be read now; not kept in files
	statusVanished   = "vanished"   // deleted between the walk and the read
)

// Pseudo-extractor that records image assets.
const (
	imageExtractorName    = "image"
	imageExtractorVersion = "4" // 2: the format facet; 3: Greek letters named, and hyphens between letters and digits dropped, in the code terms of its name; 4: the same, whatever stands around the letter, as the index folds it
)

// openFile opens a file to process; tests replace it to simulate errors
// that root cannot meet (permissions) and races (a file deleted after the
// walk).
var openFile = os.Open

// headBytes is how much of a file decides binary or text and the language.
const headBytes = 8 << 10

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// fileResult is what processing one file produced.
type fileResult struct {
	rel       string
	existed   bool
	size      int64
	mtimeNs   int64
	sha       string // hex SHA-256 of the raw bytes, "" when not read whole
	status    string
	reason    string
	detail    string
	kind      string
	language  string
	title     string
	facets    string // JSON object or ""
	role      Role   // "" for a skipped file
	extractor string
	version   string
	channels  []string
	assetID   string
	mime      string
	units     []evRow
	keep      keepPlan // what it keeps of its current units (keep.go)
	terms     []byte   // FileTerms of the units' leaves
	bytesRead int64
	err       error // fatal: stops the sync
}

// evRow is one evidence unit ready to insert.
type evRow struct {
	id        string
	parentID  string
	ordinal   int
	level     string
	leaf      bool
	title     string
	heading   string // JSON array
	startLine int
	endLine   int
	channel   string
	sha       string
	text      string
	codeTerms string
	tokens    int
	fix       bool // kept (keep.go), with other lines, parent or channel
}

// processor reads and extracts files for one worker goroutine.
type processor struct {
	ix    *Indexer
	src   Source
	force bool // re-extract even when the content hash is unchanged
	buf   []byte

	oldUnits *sql.Stmt // sqlOldUnits, prepared by the first planKeep
}

// close releases what the processor prepared.
func (p *processor) close() {
	if p.oldUnits != nil {
		p.oldUnits.Close()
	}
}

// process reads one file and decides what it becomes. Only a failure to
// store an asset is fatal (res.err); anything wrong with the file itself
// is a skip.
func (p *processor) process(ctx context.Context, f walkFile, old *fileState, reextract bool) (res fileResult) {
	res = fileResult{rel: f.rel, existed: old != nil, size: f.size, mtimeNs: f.mtimeNs}
	if ctx.Err() != nil {
		res.err = ctx.Err()
		return res
	}
	maxText := p.ix.opts.MaxFileBytes
	if f.size > max(maxText, MaxAssetBytes) {
		return res.skip(SkipTooLarge, fmt.Sprintf("%d bytes", f.size))
	}
	fh, err := openFile(f.abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			res.status = statusVanished
			return res
		}
		res.status, res.detail = statusUnreadable, errDetail(err)
		return res
	}
	defer fh.Close()
	if fi, err := fh.Stat(); err == nil {
		if !fi.Mode().IsRegular() {
			return res.skip(SkipSpecial, specialKind(fi.Mode()))
		}
		res.size, res.mtimeNs = fi.Size(), fi.ModTime().UnixNano()
	}
	limit := max(maxText, MaxAssetBytes)
	if cap(p.buf) < int(min(res.size, limit))+1 {
		p.buf = make([]byte, 0, int(min(res.size, limit))+1)
	}
	// Read the head first: a binary file is judged without reading it whole.
	buf := p.buf[:0]
	n, err := io.ReadFull(fh, buf[:min(headBytes, cap(buf))])
	buf = buf[:n]
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		res.status, res.detail = statusUnreadable, errDetail(err)
		return res
	}
	res.bytesRead = int64(n)
	mime := imageMIME(f.rel, buf)
	limit = maxText
	if mime != "" {
		limit = MaxAssetBytes
	}
	if res.size > limit {
		return res.skip(SkipTooLarge, fmt.Sprintf("%d bytes", res.size))
	}
	if mime == "" && bytes.IndexByte(buf, 0) >= 0 && utf16Order(buf) == nil {
		return res.skip(SkipBinary, "")
	}
	// The rest, bounded: the file may have grown since the stat.
	for {
		if int64(len(buf)) > limit {
			return res.skip(SkipTooLarge, fmt.Sprintf("more than %d bytes", limit))
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := fh.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		res.bytesRead += int64(n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			res.status, res.detail = statusUnreadable, errDetail(err)
			return res
		}
		if err := ctx.Err(); err != nil {
			res.err = err
			return res
		}
	}
	p.buf = buf[:0]
	if cap(p.buf) > 1<<20 {
		p.buf = nil // keep big buffers no longer than one file
	}
	res.size = int64(len(buf))
	sum := sha256.Sum256(buf)
	res.sha = hex.EncodeToString(sum[:])
	if !p.force && !reextract && old != nil && old.sha == res.sha && (old.status == statusIndexed || old.status == statusAsset) {
		res.status = statusTouched
		return res
	}
	if mime != "" {
		return p.image(res, buf, mime)
	}
	res = p.text(res, buf)
	if !p.force && res.status == statusIndexed && old != nil && old.status == statusIndexed {
		p.planKeep(ctx, &res)
	}
	return res
}

func (r fileResult) skip(reason, detail string) fileResult {
	r.status, r.reason, r.detail = statusSkipped, reason, detail
	return r
}

// image stores an image as an asset and describes it with one evidence
// unit (kind image, channel image, no text) so that its name and path are
// searchable.
func (p *processor) image(res fileResult, data []byte, mime string) fileResult {
	p.ix.extractCalls.Add(1)
	if err := p.ix.assets.put(res.sha, data); err != nil {
		res.err = err
		return res
	}
	name := path.Base(res.rel)
	res.status, res.assetID, res.mime = statusAsset, res.sha, mime
	res.kind, res.title = KindImage, name
	res.extractor, res.version = imageExtractorName, imageExtractorVersion
	res.channels = []string{ChannelImage}
	res.role = DetectRole(res.rel, nil, "")
	facets, _ := json.Marshal(map[string]string{"format": imageFormat(mime), "mime": mime, "asset_id": res.sha,
		FacetRole: string(res.role)})
	res.facets = string(facets)
	ids := newIDMaker(p.src.ID, res.rel)
	u := Unit{Level: LevelDocument, Parent: -1, Title: name, Channel: ChannelImage}
	row := ids.row(u, 0, "", true, encodeHeading(nil), CodeTerms(name+"\n"+res.rel))
	// An image unit has no text: its hash is the asset's (the bytes'), so
	// that a hit, a run and its diff tell one image from another.
	row.sha = res.sha
	res.units = []evRow{row}
	res.terms = leafTerms(res.units)
	return res
}

// text decodes and extracts a text file. The raw bytes are hashed as they
// are on disk; the text handed to the extractor has its UTF-8 BOM removed
// and CRLF line ends turned into LF (line numbers do not change).
func (p *processor) text(res fileResult, data []byte) fileResult {
	if order := utf16Order(data); order != nil {
		// UTF-16 with its byte order mark (what Windows tools write):
		// decoded to UTF-8, line numbers unchanged.
		text, ok := decodeUTF16(data[2:], order)
		if !ok {
			return res.skip(SkipUndecodable, "not valid UTF-16")
		}
		if bytes.IndexByte(text, 0) >= 0 {
			// U+0000 is no text character: binary data that happens to
			// start with the bytes of a mark.
			return res.skip(SkipBinary, "")
		}
		data = text
	}
	data = bytes.TrimPrefix(data, utf8BOM)
	if !utf8.Valid(data) {
		return res.skip(SkipUndecodable, "not valid UTF-8")
	}
	head := data[:min(len(data), headBytes)]
	lang := DetectLanguage(res.rel, head)
	ex := ExtractorFor(res.rel, lang)
	if ex == nil {
		return res.skip(SkipUnsupported, "")
	}
	var text string
	if bytes.Contains(data, []byte("\r\n")) {
		text = string(bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n")))
	} else {
		text = string(data)
	}
	p.ix.extractCalls.Add(1)
	out, err := safeExtract(ex, res.rel, text)
	if err != nil {
		return res.skip(SkipExtractError, truncate(err.Error(), 200))
	}
	res.status = statusIndexed
	res.extractor, res.version = ex.Name(), ex.Version()
	res.kind, res.language, res.title = out.Kind, out.Language, out.Title
	if res.kind == "" {
		res.kind = "text"
	}
	if res.language == "" {
		res.language = lang
	}
	res.role = DetectRole(res.rel, head, res.language)
	facets := make(map[string]string, len(out.Facets)+1)
	for k, v := range out.Facets {
		facets[k] = v
	}
	facets[FacetRole] = string(res.role)
	b, _ := json.Marshal(facets)
	res.facets = string(b)
	units := out.Units
	if len(units) == 0 {
		units = []Unit{{Level: LevelDocument, Parent: -1, Title: res.title, StartLine: 1,
			EndLine: max(1, strings.Count(text, "\n")), Channel: ChannelText, Text: text}}
	}
	res.units = buildRows(p.src.ID, res.rel, units)
	res.terms = leafTerms(res.units)
	res.channels = channelsOf(res.units)
	return res
}

// safeExtract runs an extractor, turning a panic into an error.
func safeExtract(ex Extractor, rel, text string) (out Extracted, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("extractor %s panicked: %v", ex.Name(), r)
		}
	}()
	return ex.Extract(rel, text)
}

// imageFormat names an image MIME type's format as the kind registry does
// (png, jpeg, svg, ico, tiff, ...): the subtype without "x-", "+xml" or a
// vendor tree.
func imageFormat(mime string) string {
	sub := strings.ToLower(strings.TrimPrefix(mime, "image/"))
	switch sub {
	case "vnd.microsoft.icon", "x-icon":
		return "ico"
	case "jpg", "pjpeg":
		return "jpeg"
	case "tif":
		return "tiff"
	}
	sub = strings.TrimPrefix(sub, "x-")
	sub = strings.TrimSuffix(sub, "+xml")
	if i := strings.IndexByte(sub, ';'); i >= 0 {
		sub = strings.TrimSpace(sub[:i])
	}
	return sub
}

// utf16Order returns the byte order a UTF-16 byte order mark at the start of
// data announces, or nil.
func utf16Order(data []byte) binary.ByteOrder {
	if len(data) < 2 {
		return nil
	}
	switch {
	case data[0] == 0xFF && data[1] == 0xFE:
		return binary.LittleEndian
	case data[0] == 0xFE && data[1] == 0xFF:
		return binary.BigEndian
	}
	return nil
}

// decodeUTF16 decodes UTF-16 code units in the given order to UTF-8; false
// for an odd number of bytes or an unpaired surrogate.
func decodeUTF16(data []byte, order binary.ByteOrder) ([]byte, bool) {
	if len(data)%2 != 0 {
		return nil, false
	}
	units := make([]uint16, len(data)/2)
	for i := range units {
		units[i] = order.Uint16(data[2*i:])
	}
	out := make([]byte, 0, len(data))
	for i := 0; i < len(units); i++ {
		u := units[i]
		switch {
		case utf16.IsSurrogate(rune(u)):
			if i+1 >= len(units) {
				return nil, false
			}
			r := utf16.DecodeRune(rune(u), rune(units[i+1]))
			if r == utf8.RuneError {
				return nil, false
			}
			out = utf8.AppendRune(out, r)
			i++
		default:
			out = utf8.AppendRune(out, rune(u))
		}
	}
	return out, true
}
