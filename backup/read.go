package backup

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
)

// maxLine bounds a line of the file: a message of the largest size a stream takes
// (a few hundred KB), in base64, with room; a longer one is damage, not a message.
const maxLine = 16 << 20

// Error is a backup file that cannot be restored, and where: nothing was changed.
type Error struct {
	File string
	// Line is the line of the file's content (after gzip) it was found on, and
	// Offset the byte of the content where that line starts; FileOffset the byte
	// of the file (compressed) read so far.
	Line       int
	Offset     int64
	FileOffset int64
	What, Do   string
}

func (e *Error) Error() string {
	return fmt.Sprintf("backup %s: %s (at line %d, byte %d of its content, byte %d of the file); nothing was restored: %s",
		e.File, e.What, e.Line, e.Offset, e.FileOffset, e.Do)
}

// What an operator can do about each kind of bad file.
const (
	doCutShort = "the file was cut short (an interrupted copy, a full disk): take a new backup, or restore an older one"
	doDamaged  = "the file is damaged: restore another copy of it, or an older backup"
	doNotOurs  = "give a file written by scoreboard backup"
)

// Reader reads a backup file, checking it as it goes: Header is its first line,
// Next gives its messages, and io.EOF once the end line has been read and every
// count and the checksum agree.
type Reader struct {
	Header Header
	file   string
	comp   *counter // the file, compressed
	zr     *gzip.Reader
	br     *bufio.Reader
	sum    hash.Hash
	line   int
	off    int64 // the content's offset of the line being read
	next   int64 // the content's offset after it
	counts []Count
	stream int
	done   bool
}

type counter struct {
	r io.Reader
	n int64
}

func (c *counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// Open opens a backup file and reads its header.
func Open(path string) (*Reader, *os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("backup %s: %w", path, err)
	}
	r, err := NewReader(path, f)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return r, f, nil
}

// NewReader reads a backup's header from r; file names it in errors.
func NewReader(file string, r io.Reader) (*Reader, error) {
	c := &counter{r: r}
	br := bufio.NewReader(c)
	rd := &Reader{file: file, comp: c, sum: sha256.New(), stream: 0}
	zr, err := gzip.NewReader(br)
	if err != nil {
		what := fmt.Sprintf("not a scoreboard backup: not gzip (%v)", err)
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			what = "empty, or cut short in its first bytes"
		}
		return nil, rd.fail(what, doNotOurs)
	}
	rd.zr = zr
	rd.br = bufio.NewReaderSize(zr, 64<<10)
	b, err := rd.readLine()
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &rd.Header); err != nil || rd.Header.Format != Format {
		return nil, rd.fail("not a scoreboard backup: its first line is not a backup's header", doNotOurs)
	}
	h := &rd.Header
	if h.Version != Version {
		return nil, rd.fail(fmt.Sprintf("format version %d, written by scoreboard %s; this scoreboard reads version %d", h.Version, h.Scoreboard, Version),
			fmt.Sprintf("restore it with scoreboard %s (the version that wrote it), or a later one that reads version %d", h.Scoreboard, h.Version))
	}
	seen := map[string]bool{}
	for i, s := range h.Streams {
		switch {
		case s.Name == "" || s.Config.Name != s.Name:
			return nil, rd.fail(fmt.Sprintf("stream %d of the header has no name, or its config another one (%q, %q)", i, s.Name, s.Config.Name), doDamaged)
		case seen[s.Name]:
			return nil, rd.fail(fmt.Sprintf("stream %s is in the header twice", s.Name), doDamaged)
		case s.FirstSeq == 0 || s.FirstSeq > s.LastSeq+1:
			return nil, rd.fail(fmt.Sprintf("stream %s: sequence range %d to %d", s.Name, s.FirstSeq, s.LastSeq), doDamaged)
		}
		seen[s.Name] = true
	}
	rd.counts = make([]Count, len(h.Streams))
	return rd, nil
}

// Next returns the next message; io.EOF after the end line, once the file is
// known whole; an *Error for anything else.
func (r *Reader) Next() (*Message, error) {
	if r.done {
		return nil, io.EOF
	}
	b, err := r.readLine()
	if err != nil {
		return nil, err
	}
	var l line
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, r.fail(fmt.Sprintf("not a message line (%v)", err), doDamaged)
	}
	if l.End != nil {
		return nil, r.end(*l.End, l.SHA256)
	}
	m := &l.Message
	if m.Stream < 0 || m.Stream >= len(r.counts) || m.Stream < r.stream {
		return nil, r.fail(fmt.Sprintf("a message of stream %d after stream %d's, of %d streams", m.Stream, r.stream, len(r.counts)), doDamaged)
	}
	r.stream = m.Stream
	s, c := r.Header.Streams[m.Stream], &r.counts[m.Stream]
	switch {
	case m.Seq <= c.LastSeq || m.Seq < s.FirstSeq || m.Seq > s.LastSeq:
		return nil, r.fail(fmt.Sprintf("stream %s: message %d out of order or out of its range %d to %d (after %d)", s.Name, m.Seq, s.FirstSeq, s.LastSeq, c.LastSeq), doDamaged)
	case m.Subject == "" || m.Time <= 0:
		return nil, r.fail(fmt.Sprintf("stream %s: message %d without its subject or time", s.Name, m.Seq), doDamaged)
	}
	c.Msgs++
	c.LastSeq = m.Seq
	r.sum.Write(b)
	r.sum.Write([]byte{'\n'})
	return m, nil
}

// end checks the end line against what was read, then that nothing follows it
// and gzip's own checksum.
func (r *Reader) end(counts []Count, sum string) error {
	if len(counts) != len(r.counts) {
		return r.fail(fmt.Sprintf("the end line counts %d streams, the header has %d", len(counts), len(r.counts)), doDamaged)
	}
	for i, c := range counts {
		if c != r.counts[i] {
			return r.fail(fmt.Sprintf("stream %s: the end line says %d messages up to %d, the file holds %d up to %d",
				r.Header.Streams[i].Name, c.Msgs, c.LastSeq, r.counts[i].Msgs, r.counts[i].LastSeq), doDamaged)
		}
	}
	if got := hex.EncodeToString(r.sum.Sum(nil)); got != sum {
		return r.fail(fmt.Sprintf("checksum mismatch: the end line says SHA-256 %s, the content has %s", sum, got), doDamaged)
	}
	n, err := io.Copy(io.Discard, r.br)
	if err != nil {
		return r.gzipFail(err)
	}
	if n > 0 {
		return r.fail(fmt.Sprintf("%d bytes after the end line", n), doDamaged)
	}
	r.done = true
	return io.EOF
}

// Counts is what has been read of each stream.
func (r *Reader) Counts() []Count { return r.counts }

// readLine reads one line of the content (without its '\n'), the header's into
// the checksum too.
func (r *Reader) readLine() ([]byte, error) {
	r.line++
	r.off = r.next
	var buf []byte
	for {
		chunk, err := r.br.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > maxLine {
			return nil, r.fail(fmt.Sprintf("a line longer than %d bytes", maxLine), doDamaged)
		}
		if err == nil {
			break
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) {
			return nil, r.fail("the file ends before its end line", doCutShort)
		}
		return nil, r.gzipFail(err)
	}
	r.next += int64(len(buf))
	if r.line == 1 {
		r.sum.Write(buf)
	}
	return bytes.TrimSuffix(buf, []byte{'\n'}), nil
}

func (r *Reader) gzipFail(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return r.fail("the file ends in the middle of its compressed data", doCutShort)
	}
	return r.fail(fmt.Sprintf("damaged compressed data (%v)", err), doDamaged)
}

func (r *Reader) fail(what, do string) *Error {
	return &Error{File: r.file, Line: r.line, Offset: r.off, FileOffset: r.comp.n, What: what, Do: do}
}

// Check reads a whole backup file and returns its header and counts: an *Error
// for any fault, so that a restore never starts on a bad file.
func Check(path string) (Header, []Count, error) {
	r, f, err := Open(path)
	if err != nil {
		return Header{}, nil, err
	}
	defer f.Close()
	for {
		if _, err := r.Next(); err != nil {
			if errors.Is(err, io.EOF) {
				return r.Header, r.counts, nil
			}
			return r.Header, nil, err
		}
	}
}
