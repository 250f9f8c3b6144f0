package sources

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// spool holds extracted results between the workers and the apply
// transaction, in order, so that memory stays bounded however large the
// source: past a threshold the encoded records move to a temporary file,
// unlinked at once, read back sequentially during the apply.
type spool struct {
	dir       string
	threshold int
	mem       bytes.Buffer
	file      *os.File
	w         *bufio.Writer
	records   int
	scratch   []byte
}

func newSpool(dir string, threshold int) *spool {
	return &spool{dir: dir, threshold: threshold}
}

func (s *spool) close() {
	if s.file != nil {
		s.file.Close()
		s.file = nil
	}
	s.mem = bytes.Buffer{}
}

func (s *spool) write(r *fileResult) error {
	if r.err != nil {
		return fmt.Errorf("spool: a failed result: %w", r.err)
	}
	b := encodeResult(s.scratch[:0], r)
	s.scratch = b[:0]
	if cap(s.scratch) > 4<<20 {
		s.scratch = nil
	}
	s.records++
	if s.file == nil && s.mem.Len()+len(b) <= s.threshold {
		s.mem.Write(b)
		return nil
	}
	if s.file == nil {
		f, err := os.CreateTemp(s.dir, "tychora-spool-*")
		if err != nil {
			return fmt.Errorf("spool: %w", err)
		}
		os.Remove(f.Name()) // unlinked: gone with the process, whatever happens
		s.file = f
		s.w = bufio.NewWriterSize(f, 1<<20)
		if _, err := s.w.Write(s.mem.Bytes()); err != nil {
			return fmt.Errorf("spool: %w", err)
		}
		s.mem = bytes.Buffer{}
	}
	if _, err := s.w.Write(b); err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	return nil
}

// each decodes the records in order and calls fn with each.
func (s *spool) each(fn func(*fileResult) error) error {
	var rd *bufio.Reader
	if s.file != nil {
		if err := s.w.Flush(); err != nil {
			return fmt.Errorf("spool: %w", err)
		}
		if _, err := s.file.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("spool: %w", err)
		}
		rd = bufio.NewReaderSize(s.file, 1<<20)
	} else {
		rd = bufio.NewReader(bytes.NewReader(s.mem.Bytes()))
	}
	for i := 0; i < s.records; i++ {
		r, err := decodeResult(rd)
		if err != nil {
			return fmt.Errorf("spool: record %d: %w", i, err)
		}
		if err := fn(&r); err != nil {
			return err
		}
	}
	return nil
}

// Record encoding: strings and integers as (u)varints, in a fixed order.
// Every field of fileResult and evRow travels but those spoolOmitted
// names (TestSpoolRoundTrip fills every field and checks both).

// spoolOmitted names the fileResult fields that do not travel: a result
// with an error stops the sync and is never spooled.
var spoolOmitted = []string{"err"}

func putStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func putInt(b []byte, v int64) []byte { return binary.AppendVarint(b, v) }

func encodeResult(b []byte, r *fileResult) []byte {
	for _, s := range []string{r.rel, r.sha, r.status, r.reason, r.detail, r.kind, r.language, r.title,
		r.facets, string(r.role), r.extractor, r.version, r.assetID, r.mime, string(r.terms)} {
		b = putStr(b, s)
	}
	existed := int64(0)
	if r.existed {
		existed = 1
	}
	b = putInt(b, existed)
	b = putInt(b, r.size)
	b = putInt(b, r.mtimeNs)
	b = putInt(b, r.bytesRead)
	b = putInt(b, r.keep.doc)
	b = putInt(b, int64(r.keep.kept))
	b = putInt(b, int64(r.keep.old))
	b = putInt(b, int64(len(r.channels)))
	for _, c := range r.channels {
		b = putStr(b, c)
	}
	b = putInt(b, int64(len(r.units)))
	for i := range r.units {
		u := &r.units[i]
		for _, s := range []string{u.id, u.parentID, u.level, u.title, u.heading, u.channel, u.sha, u.text, u.codeTerms} {
			b = putStr(b, s)
		}
		leaf := int64(0)
		if u.leaf {
			leaf = 1
		}
		if u.fix {
			leaf |= 2
		}
		b = putInt(b, leaf)
		b = putInt(b, int64(u.ordinal))
		b = putInt(b, int64(u.startLine))
		b = putInt(b, int64(u.endLine))
		b = putInt(b, int64(u.tokens))
	}
	return b
}

type decoder struct {
	rd  *bufio.Reader
	err error
}

func (d *decoder) str() string {
	if d.err != nil {
		return ""
	}
	n, err := binary.ReadUvarint(d.rd)
	if err != nil {
		d.err = err
		return ""
	}
	if n > 1<<31 {
		d.err = errors.New("string too long")
		return ""
	}
	if n == 0 {
		return ""
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(d.rd, b); err != nil {
		d.err = err
		return ""
	}
	return string(b)
}

func (d *decoder) int() int64 {
	if d.err != nil {
		return 0
	}
	v, err := binary.ReadVarint(d.rd)
	if err != nil {
		d.err = err
	}
	return v
}

func decodeResult(rd *bufio.Reader) (fileResult, error) {
	d := &decoder{rd: rd}
	var r fileResult
	var role, terms string
	for _, p := range []*string{&r.rel, &r.sha, &r.status, &r.reason, &r.detail, &r.kind, &r.language, &r.title,
		&r.facets, &role, &r.extractor, &r.version, &r.assetID, &r.mime, &terms} {
		*p = d.str()
	}
	r.role = Role(role)
	if terms != "" {
		r.terms = []byte(terms)
	}
	r.existed = d.int() == 1
	r.size = d.int()
	r.mtimeNs = d.int()
	r.bytesRead = d.int()
	r.keep = keepPlan{doc: d.int(), kept: int(d.int()), old: int(d.int())}
	nc := d.int()
	if d.err == nil && (nc < 0 || nc > 1<<10) {
		return r, errors.New("bad channel count")
	}
	for range nc {
		r.channels = append(r.channels, d.str())
	}
	n := d.int()
	if d.err == nil && (n < 0 || n > 1<<24) {
		return r, errors.New("bad unit count")
	}
	if n > 0 {
		r.units = make([]evRow, n)
	}
	for i := range r.units {
		u := &r.units[i]
		for _, p := range []*string{&u.id, &u.parentID, &u.level, &u.title, &u.heading, &u.channel, &u.sha, &u.text, &u.codeTerms} {
			*p = d.str()
		}
		flags := d.int()
		u.leaf, u.fix = flags&1 != 0, flags&2 != 0
		u.ordinal = int(d.int())
		u.startLine = int(d.int())
		u.endLine = int(d.int())
		u.tokens = int(d.int())
	}
	return r, d.err
}
