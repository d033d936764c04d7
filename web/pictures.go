package web

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goclub/scoreboard/render"
)

// picture is one unit's picture and game record, drawn the first time each is
// asked for and then kept: a revision never changes, so it is drawn once however
// many viewers ask.
type picture struct {
	port, problem string
	seq, revision uint64
	name          string // pictureName's
	unit          []byte

	svgOnce, sgfOnce sync.Once
	svg, sgf         []byte
	svgErr, sgfErr   error
}

// draws counts the pictures and game records drawn (the hub's internal test holds
// it to once per unit).
var draws atomic.Uint64

func (p *picture) SVG() ([]byte, error) {
	p.svgOnce.Do(func() {
		draws.Add(1)
		p.svg, p.svgErr = render.SVG(p.problem, p.unit)
	})
	return p.svg, p.svgErr
}

func (p *picture) SGF() ([]byte, error) {
	p.sgfOnce.Do(func() {
		draws.Add(1)
		p.sgf, p.sgfErr = render.SGF(p.problem, p.unit)
	})
	return p.sgf, p.sgfErr
}

// immutable is the Cache-Control of an address whose answer never changes: a
// picture by revision, a kept unit by its stream number. A browser, or a caching
// proxy in front of the page, serves it for a year without asking again.
const immutable = "public, max-age=31536000, immutable"

// pictureName names a unit's picture and game record: the bucket's revision of its
// board and a hash of what is drawn. The revision alone is not enough for an
// address cached for a year: a history started again from an empty state directory
// (or another club's hub) numbers its revisions from 1 again, and a browser or proxy
// would show the old picture under the new board.
func pictureName(problem string, unit []byte, revision uint64) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(problem))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write(unit)
	return strconv.FormatUint(revision, 10) + "-" + strconv.FormatUint(h.Sum64(), 36)
}

// pictureFile serves /pictures/<port>/<name>.svg and .sgf: a board's unit,
// cacheable for good. A unit the hub no longer holds (the port's latest few) is
// not found, and that answer is not cached: the page reads the newer board's
// address from its events.
func (s *Server) pictureFile(w http.ResponseWriter, r *http.Request) {
	port, file := r.PathValue("port"), r.PathValue("file")
	name, ext, _ := strings.Cut(file, ".")
	if !validPortKey(port) || name == "" || (ext != "svg" && ext != "sgf") {
		notFound(w, "want /pictures/<port>/<name>.svg or .sgf, as a board's picture and sgf fields give them")
		return
	}
	p := s.hub.picture(r.Context(), port, name)
	if p == nil {
		notFound(w, fmt.Sprintf("port %q has no unit %s now: /api/boards gives each port's latest", port, name))
		return
	}
	s.servePicture(w, r, p, ext, immutable)
}

// servePicture writes p's picture (ext "svg") or game record ("sgf") with the
// revision as its ETag, so a client that has it gets 304. The ETag is weak: the
// same picture, gzipped or not, is the same picture.
func (s *Server) servePicture(w http.ResponseWriter, r *http.Request, p *picture, ext, cacheControl string) {
	if ext == "sgf" && !render.HasSGF(p.problem) {
		notFound(w, fmt.Sprintf("port %q: %s units have no game record", p.port, p.problem))
		return
	}
	draw, ctype, name := p.SVG, "image/svg+xml", ""
	if ext == "sgf" {
		draw, ctype = p.SGF, "application/x-go-sgf; charset=utf-8"
		name = fmt.Sprintf("%s-%d.sgf", p.port, p.seq)
	}
	data, err := draw()
	if err != nil {
		notFound(w, fmt.Sprintf("port %q unit %d (%s): %v", p.port, p.seq, p.problem, err))
		return
	}
	serveCached(w, r, `W/"`+p.name+`"`, cacheControl, ctype, name, data)
}

// serveCached writes data with an ETag and a Cache-Control; a request that has
// that ETag already (If-None-Match) gets 304 and no body. name, when set, is the
// file name a download is given.
func serveCached(w http.ResponseWriter, r *http.Request, etag, cacheControl, ctype, name string, data []byte) {
	h := w.Header()
	h.Set("ETag", etag)
	h.Set("Cache-Control", cacheControl)
	h.Set("Content-Type", ctype)
	if name != "" {
		h.Set("Content-Disposition", fmt.Sprintf("inline; filename=%q", name))
	}
	// ServeContent answers If-None-Match (weakly, as RFC 9110 says for it) and
	// ranges; no modification time, so the ETag alone decides.
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(data))
}

// notFound is a 404 nobody keeps: the address may answer later, or another one does.
func notFound(w http.ResponseWriter, msg string) {
	w.Header().Set("Cache-Control", "no-store")
	http.Error(w, msg, http.StatusNotFound)
}
